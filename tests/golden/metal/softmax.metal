// ---- r_16_25_4
kernel void r_16_25_4(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 16 */
  float acc0;
  acc0 = (-(float)INFINITY);
  for (int ridx2 = 0; ridx2 < 25; ridx2++) {
    int alu0 = ((ridx2*4)+(iidx0*100));
    float val0 = data1[(alu0+3)];
    float alu1 = (val0*4.000000000e0f);
    float val1 = data1[(alu0+2)];
    float alu2 = (val1*4.000000000e0f);
    float val2 = data1[(alu0+1)];
    float alu3 = (val2*4.000000000e0f);
    float val3 = data1[alu0];
    float alu4 = (val3*4.000000000e0f);
    float alu5 = ((alu3!=alu3)?alu3:((alu4<alu3)?alu3:alu4));
    float alu6 = ((alu2!=alu2)?alu2:((alu5<alu2)?alu2:alu5));
    float alu7 = ((alu1!=alu1)?alu1:((alu6<alu1)?alu1:alu6));
    acc0 = ((alu7!=alu7)?alu7:((acc0<alu7)?alu7:acc0));
  }
  data0[iidx0] = acc0;
}
// ---- r_16_25_4
kernel void r_16_25_4(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 16 */
  float val0 = data2[iidx0];
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx2 = 0; ridx2 < 25; ridx2++) {
    int alu0 = ((ridx2*4)+(iidx0*100));
    float val1 = data1[alu0];
    float val2 = data1[(alu0+1)];
    float val3 = data1[(alu0+2)];
    float val4 = data1[(alu0+3)];
    acc0 = (acc0+(((precise::exp2((((val1*4.000000000e0f)-val0)*1.442695022e0f))+precise::exp2((((val2*4.000000000e0f)-val0)*1.442695022e0f)))+precise::exp2((((val3*4.000000000e0f)-val0)*1.442695022e0f)))+precise::exp2((((val4*4.000000000e0f)-val0)*1.442695022e0f))));
  }
  data0[iidx0] = acc0;
}
// ---- E_16_100
kernel void E_16_100(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], device const float* data3 [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 1600 */
  float val0 = data1[iidx0];
  int alu0 = (iidx0/100);
  float val1 = data2[alu0];
  float val2 = data3[alu0];
  data0[iidx0] = (precise::exp2((((val0*4.000000000e0f)-val1)*1.442695022e0f))/val2);
}
// ---- E_16_100
kernel void E_16_100(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], device const float* data3 [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 1600 */
  float val0 = data1[iidx0];
  int alu0 = (iidx0/100);
  float val1 = data2[alu0];
  float val2 = data3[alu0];
  data0[iidx0] = (((val0*4.000000000e0f)-val1)-(precise::log2(val2)*6.931471825e-1f));
}
