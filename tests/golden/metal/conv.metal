// ---- E_3_3_3_5
kernel void E_3_3_3_5(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 256 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-134))?(-134):alu0)*(-1));
  float val0 = data1[(((((alu1/45)*9)+((alu1%5)*27))+((alu1/5)%3))+(((alu1/15)%3)*3))];
  if ((iidx0<135)) data0[alu1] = val0;
}
// ---- r_2_5_9_9_3_3_1_3
kernel void r_2_5_9_9_3_3_1_3(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], device const float* data3 [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 896 */
  int alu0 = (iidx0*(-1));
  int alu1 = (((alu0<(-809))?(-809):alu0)*(-1));
  int alu2 = (alu1%9);
  int alu3 = ((alu1/81)%5);
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx4 = 0; ridx4 < 3; ridx4++) {
    for (int ridx5 = 0; ridx5 < 3; ridx5++) {
      int alu4 = (((alu1/9)%9)+ridx5);
      bool alu5 = ((0<alu4)&(alu4<10));
      bool alu6 = (alu5&(alu2<8));
      int alu7 = (((((alu1/405)*243)+(alu1%81))+(ridx4*81))+(ridx5*9));
      float val0 = (alu6?data1[(alu7+(-8))]:0.000000000e0f);
      int alu8 = ((alu3+(ridx4*45))+(ridx5*15));
      float val1 = data2[(alu8+10)];
      float val2 = (alu5?data1[(alu7+(-9))]:0.000000000e0f);
      float val3 = data2[(alu8+5)];
      bool alu9 = (alu5&(0<alu2));
      float val4 = (alu9?data1[(alu7+(-10))]:0.000000000e0f);
      float val5 = data2[alu8];
      for (int ridx6 = 0; ridx6 < 1; ridx6++) {
        acc0 = (acc0+fma((alu6?val0:0.000000000e0f),val1,fma((alu5?val2:0.000000000e0f),val3,((alu9?val4:0.000000000e0f)*val5))));
      }
    }
  }
  float val6 = data3[alu3];
  if ((iidx0<810)) data0[alu1] = (acc0+val6);
}
// ---- r_2_5_4_4_2_1_2
kernel void r_2_5_4_4_2_1_2(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 160 */
  float acc0;
  acc0 = (-(float)INFINITY);
  for (int ridx4 = 0; ridx4 < 2; ridx4++) {
    int alu0 = ((((((iidx0/80)*405)+(((iidx0/4)%4)*18))+(((iidx0/16)%5)*81))+((iidx0%4)*2))+(ridx4*9));
    float val0 = data1[(alu0+1)];
    float val1 = data1[alu0];
    float alu1 = ((val0!=val0)?val0:((val1<val0)?val0:val1));
    for (int ridx5 = 0; ridx5 < 1; ridx5++) {
      acc0 = ((alu1!=alu1)?alu1:((acc0<alu1)?alu1:acc0));
    }
  }
  data0[iidx0] = acc0;
}
// ---- r_2_3_3_3_3_1_3
kernel void r_2_3_3_3_3_1_3(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 54 */
  int alu0 = ((iidx0/3)%3);
  int alu1 = (iidx0%3);
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx4 = 0; ridx4 < 3; ridx4++) {
    int alu2 = ((((((iidx0/27)*243)+(alu0*27))+(((iidx0/9)%3)*81))+(alu1*3))+(ridx4*9));
    float val0 = data1[alu2];
    float val1 = data1[(alu2+1)];
    float val2 = data1[(alu2+2)];
    for (int ridx5 = 0; ridx5 < 1; ridx5++) {
      acc0 = (acc0+((val0+val1)+val2));
    }
  }
  float alu3 = (-(((float)(alu0))*3.000000000e0f));
  float alu4 = (-trunc(((alu3+9.000000000e0f)+0.000000000e0f)));
  float alu5 = trunc((alu3+0.000000000e0f));
  float alu6 = (-(((float)(alu1))*3.000000000e0f));
  float alu7 = (-trunc(((alu6+9.000000000e0f)+0.000000000e0f)));
  float alu8 = trunc((alu6+0.000000000e0f));
  data0[iidx0] = (acc0/(((-((alu4<(-3.000000000e0f))?(-3.000000000e0f):alu4))-((alu5<0.000000000e0f)?0.000000000e0f:alu5))*((-((alu7<(-3.000000000e0f))?(-3.000000000e0f):alu7))-((alu8<0.000000000e0f)?0.000000000e0f:alu8))));
}
