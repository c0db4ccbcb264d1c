// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], device const float* data3 [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  float val1 = data2[iidx0];
  float val2 = data3[(iidx0%33)];
  float alu0 = ((val0*val1)+val2);
  data0[iidx0] = ((((alu0<0.000000000e0f)|(alu0==0.000000000e0f))?0.000000000e0f:alu0)*2.000000000e0f);
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  data0[iidx0] = precise::exp2((val0*1.442695022e0f));
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  data0[iidx0] = (precise::log2((((val0<0.000000000e0f)?(-val0):((0.000000000e0f<val0)?val0:(val0*val0)))+1.000000015e-1f))*6.931471825e-1f);
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  data0[iidx0] = precise::sin(val0);
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  data0[iidx0] = precise::sqrt(((val0<0.000000000e0f)?(-val0):((0.000000000e0f<val0)?val0:(val0*val0))));
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  float alu0 = precise::exp2(((-((val0<0.000000000e0f)?(-val0):val0))*1.442695022e0f));
  float alu1 = (1.000000000e0f/(alu0+1.000000000e0f));
  data0[iidx0] = (((0.000000000e0f<val0)|(val0==0.000000000e0f))?alu1:(alu0*alu1));
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  float val1 = data2[iidx0];
  data0[iidx0] = ((val0<val1)?val0:val1);
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  bool alu0 = (val0<0.000000000e0f);
  float alu1 = (alu0?(-val0):val0);
  bool alu2 = (alu1<1.250000000e-1f);
  float alu3 = (alu2?val0:0.000000000e0f);
  float alu4 = (alu3*alu3);
  float alu5 = precise::exp2(((alu1*(-2.000000000e0f))*1.442695022e0f));
  float alu6 = (((-alu5)+1.000000000e0f)/(alu5+1.000000000e0f));
  data0[iidx0] = (alu2?(alu3+((alu3*alu4)*((((((alu4*2.186948806e-2f)-5.396825448e-2f)*alu4)+1.333333403e-1f)*alu4)-3.333333433e-1f))):(alu0?(-alu6):alu6));
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  float alu0 = (val0*(-7.071067691e-1f));
  bool alu1 = (alu0<0.000000000e0f);
  float alu2 = (alu1?(-alu0):alu0);
  bool alu3 = (alu2<5.000000000e-1f);
  float alu4 = (alu3?alu0:0.000000000e0f);
  float alu5 = (alu4*alu4);
  float alu6 = (alu3?1.000000000e0f:alu2);
  float alu7 = ((2.600000000e1f<alu6)?2.600000000e1f:alu6);
  float alu8 = (1.000000000e0f/((alu7*5.000000000e-1f)+1.000000000e0f));
  float alu9 = (alu8*precise::exp2(((((((((((((((((((((alu8*1.708727628e-1f)+(-8.221522570e-1f))*alu8)+1.488515854e0f)*alu8)+(-1.135203958e0f))*alu8)+2.788680792e-1f)*alu8)+(-1.862880588e-1f))*alu8)+9.678418189e-2f)*alu8)+3.740919530e-1f)*alu8)+1.000023723e0f)*alu8)+(-1.265512228e0f))-(alu7*alu7))*1.442695022e0f)));
  data0[iidx0] = (val0*((alu3?((-(alu4*((((((((((((alu5*1.205533263e-4f)+(-8.548327023e-4f))*alu5)+5.223977845e-3f)*alu5)+(-2.686617151e-2f))*alu5)+1.128379181e-1f)*alu5)+(-3.761263788e-1f))*alu5)+1.128379226e0f)))+1.000000000e0f):(alu1?((-alu9)+2.000000000e0f):alu9))*5.000000000e-1f));
}
// ---- E_64_33
kernel void E_64_33(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2112 */
  float val0 = data1[iidx0];
  float val1 = data2[iidx0];
  data0[iidx0] = (val0/(((val1<0.000000000e0f)?(-val1):((0.000000000e0f<val1)?val1:(val1*val1)))+5.000000000e-1f));
}
