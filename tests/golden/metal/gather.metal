// ---- E_10_3
kernel void E_10_3(device float* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 30 */
  int val0 = data1[iidx0];
  bool alu0 = ((val0<20)&((val0<0)!=1));
  float val1 = (alu0?data2[((int)((uint)((iidx0/3)*20)+(uint)val0))]:0.000000000e0f);
  data0[iidx0] = (alu0?val1:0.000000000e0f);
}
// ---- E_12_5
kernel void E_12_5(device long* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 60 */
  int val0 = data1[(iidx0/5)];
  data0[iidx0] = ((long)((val0==(iidx0%5))));
}
