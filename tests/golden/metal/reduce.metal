// ---- r_37_129
kernel void r_37_129(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 37 */
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx1 = 0; ridx1 < 129; ridx1++) {
    float val0 = data1[(ridx1+(iidx0*129))];
    acc0 = (acc0+val0);
  }
  data0[iidx0] = acc0;
}
// ---- r_129_37
kernel void r_129_37(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-128))?(-128):alu0)*(-1));
  float acc0;
  acc0 = (-(float)INFINITY);
  for (int ridx1 = 0; ridx1 < 37; ridx1++) {
    float val0 = data1[(alu1+(ridx1*129))];
    acc0 = ((val0!=val0)?val0:((acc0<val0)?val0:acc0));
  }
  if ((iidx0<129)) data0[alu1] = acc0;
}
// ---- r_37_129
kernel void r_37_129(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx0 = 0; ridx0 < 37; ridx0++) {
    for (int ridx1 = 0; ridx1 < 129; ridx1++) {
      float val0 = data1[((ridx0*129)+ridx1)];
      acc0 = (acc0+val0);
    }
  }
  data0[0] = (acc0/4.773000000e3f);
}
// ---- r_2_128_256
kernel void r_2_128_256(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int gidx0 = (int)gid.x; /* 2 */
  int lidx0 = (int)lid.x; /* 256 */
  threadgroup float temp0[256];
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx2 = 0; ridx2 < 128; ridx2++) {
    float val0 = data1[(((ridx2*256)+(gidx0*32768))+lidx0)];
    acc0 = (acc0+val0);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  temp0[lidx0] = acc0;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float acc1;
  acc1 = 0.000000000e0f;
  for (int ridx4 = 0; ridx4 < 256; ridx4++) {
    float val1 = temp0[ridx4];
    acc1 = (acc1+val1);
  }
  if ((lidx0==0)) data0[gidx0] = acc1;
}
// ---- r_1_2
kernel void r_1_2(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  float val0 = data1[0];
  float val1 = data1[1];
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx0 = 0; ridx0 < 1; ridx0++) {
    acc0 = (acc0+(val0+val1));
  }
  data0[0] = acc0;
}
// ---- r_37_129_129
kernel void r_37_129_129(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 4864 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-4772))?(-4772):alu0)*(-1));
  int alu2 = (alu1%129);
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx2 = 0; ridx2 < 129; ridx2++) {
    float val0 = data1[(((alu1/129)*129)+ridx2)];
    acc0 = (acc0+(((ridx2<alu2)|(ridx2==alu2))?val0:0.000000000e0f));
  }
  if ((iidx0<4773)) data0[alu1] = acc0;
}
// ---- r_37_129
kernel void r_37_129(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 37 */
  float acc0;
  acc0 = (-(float)INFINITY);
  for (int ridx2 = 0; ridx2 < 129; ridx2++) {
    float val0 = data1[(ridx2+(iidx0*129))];
    float alu0 = ((val0!=val0)?(-(float)INFINITY):val0);
    acc0 = ((alu0!=alu0)?alu0:((acc0<alu0)?alu0:acc0));
  }
  data0[iidx0] = acc0;
}
// ---- r_37_129
kernel void r_37_129(device long* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 37 */
  float val0 = data2[iidx0];
  int acc0;
  acc0 = (-2147483647-1);
  for (int ridx1 = 0; ridx1 < 129; ridx1++) {
    float val1 = data1[(ridx1+(iidx0*129))];
    int alu0 = (ridx1*(-1));
    int alu1 = ((val1!=val1)?(alu0+258):((val1==val0)?(alu0+129):0));
    acc0 = ((acc0<alu1)?alu1:acc0);
  }
  int alu2 = ((int)((uint)acc0*(uint)(-1)));
  data0[iidx0] = ((long)(((129<acc0)?((int)((uint)alu2+(uint)258)):((int)((uint)alu2+(uint)129)))));
}
