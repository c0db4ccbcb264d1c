// ---- E_300
kernel void E_300(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 384 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-299))?(-299):alu0)*(-1));
  float val0 = data1[alu1];
  float val1 = data2[alu1];
  if ((iidx0<300)) data0[alu1] = ((float)(__h2f(__f2h((float)((((float)(__h2f(__f2h((float)((((float)(__h2f(__f2h((float)(val0)))))*((float)(__h2f(__f2h((float)(val1)))))))))))+1.000000000e0f))))));
}
// ---- E_300
kernel void E_300(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 384 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-299))?(-299):alu0)*(-1));
  float val0 = data1[alu1];
  if ((iidx0<300)) data0[alu1] = ((float)(__bf2f(__f2bf((float)((val0*1.000000000e3f))))));
}
// ---- r_75_4
kernel void r_75_4(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx0 = 0; ridx0 < 75; ridx0++) {
    int alu0 = (ridx0*4);
    float val0 = data1[alu0];
    float val1 = data1[(alu0+1)];
    float val2 = data1[(alu0+2)];
    float val3 = data1[(alu0+3)];
    acc0 = (acc0+(((val0+val1)+val2)+val3));
  }
  data0[0] = ((float)(__h2f(__f2h((float)(acc0)))));
}
