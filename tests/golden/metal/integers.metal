// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const int* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  int val1 = data2[alu1];
  if ((iidx0<200)) data0[alu1] = ((int)((uint)((int)((uint)val0*(uint)3))+(uint)((int)((uint)val1*(uint)3))));
}
// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const int* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  int val1 = data2[alu1];
  if ((iidx0<200)) data0[alu1] = ((val1)==0?0:(val1)==-1?(-val0):(val0/val1));
}
// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const int* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  int val1 = data2[alu1];
  int alu2 = ((val1)==0?0:(val1)==-1?0:(val0%val1));
  if ((iidx0<200)) data0[alu1] = (((alu2!=0)&((alu2<0)!=(val1<0)))?((int)((uint)alu2+(uint)val1)):alu2);
}
// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  if ((iidx0<200)) data0[alu1] = ((int)((uint)val0<<2));
}
// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const int* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  int val1 = data2[alu1];
  if ((iidx0<200)) data0[alu1] = (val0&val1);
}
// ---- E_200
kernel void E_200(device int* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], device const int* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  int val1 = data2[alu1];
  if ((iidx0<200)) data0[alu1] = (val0^val1);
}
// ---- E_200
kernel void E_200(device float* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  if ((iidx0<200)) data0[alu1] = (((float)(val0))*5.000000000e-1f);
}
// ---- E_200
kernel void E_200(device long* data0 [[buffer(0)]], device const int* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-199))?(-199):alu0)*(-1));
  int val0 = data1[alu1];
  if ((iidx0<200)) data0[alu1] = (((long)(val0))*4000000l);
}
