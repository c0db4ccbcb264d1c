// ---- r_4_16_8_1_8_1_16
kernel void r_4_16_8_1_8_1_16(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], constant int& pos [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int gidx0 = (int)gid.x; /* 64 */
  int alu0 = (gidx0%16);
  int alu1 = (pos+1);
  bool alu2 = (alu0<alu1);
  int lidx0 = (int)lid.x; /* 16 */
  int alu3 = ((gidx0/16)*8);
  int alu4 = ((gidx0/32)*128);
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx4 = 0; ridx4 < 8; ridx4++) {
    float val0 = data1[(alu3+ridx4)];
    float val1 = (alu2?data2[((alu4+(alu0*8))+ridx4)]:0.000000000e0f);
    acc0 = fma(val0,val1,acc0);
  }
  threadgroup float temp0[16];
  bool alu5 = (lidx0<alu1);
  float acc1;
  acc1 = 0.000000000e0f;
  for (int ridx6 = 0; ridx6 < 8; ridx6++) {
    float val2 = data1[(alu3+ridx6)];
    float val3 = (alu5?data2[((alu4+ridx6)+(lidx0*8))]:0.000000000e0f);
    acc1 = fma(val2,val3,acc1);
  }
  float alu6 = (alu5?(acc1*3.535533845e-1f):(-(float)INFINITY));
  float acc2;
  acc2 = (-(float)INFINITY);
  for (int ridx5 = 0; ridx5 < 1; ridx5++) {
    for (int ridx8 = 0; ridx8 < 1; ridx8++) {
      acc2 = ((alu6!=alu6)?alu6:((acc2<alu6)?alu6:acc2));
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  temp0[lidx0] = acc2;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float acc3;
  acc3 = (-(float)INFINITY);
  for (int ridx10 = 0; ridx10 < 16; ridx10++) {
    float val4 = temp0[ridx10];
    acc3 = ((val4!=val4)?val4:((acc3<val4)?val4:acc3));
  }
  if ((alu2&(lidx0==0))) data0[gidx0] = precise::exp2((((acc0*3.535533845e-1f)-acc3)*1.442695022e0f));
}
// ---- r_1_2_4_4_1_4_4
kernel void r_1_2_4_4_1_4_4(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], device const float* data2 [[buffer(2)]], constant int& pos [[buffer(3)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2 */
  int alu0 = (iidx0*4);
  int alu1 = (pos+1);
  float acc0;
  acc0 = 0.000000000e0f;
  float acc1;
  acc1 = 0.000000000e0f;
  float acc2;
  acc2 = 0.000000000e0f;
  float acc3;
  acc3 = 0.000000000e0f;
  float acc4;
  acc4 = 0.000000000e0f;
  float acc5;
  acc5 = 0.000000000e0f;
  float acc6;
  acc6 = 0.000000000e0f;
  float acc7;
  acc7 = 0.000000000e0f;
  float acc8;
  acc8 = 0.000000000e0f;
  float acc9;
  acc9 = 0.000000000e0f;
  float acc10;
  acc10 = 0.000000000e0f;
  float acc11;
  acc11 = 0.000000000e0f;
  float acc12;
  acc12 = 0.000000000e0f;
  float acc13;
  acc13 = 0.000000000e0f;
  float acc14;
  acc14 = 0.000000000e0f;
  float acc15;
  acc15 = 0.000000000e0f;
  float acc16;
  acc16 = 0.000000000e0f;
  float acc17;
  acc17 = 0.000000000e0f;
  float acc18;
  acc18 = 0.000000000e0f;
  float acc19;
  acc19 = 0.000000000e0f;
  for (int ridx5 = 0; ridx5 < 1; ridx5++) {
    for (int ridx6 = 0; ridx6 < 4; ridx6++) {
      int alu2 = (ridx6*4);
      bool alu3 = (alu2<alu1);
      float val0 = (alu3?data1[alu2]:0.000000000e0f);
      int alu4 = ((ridx6*32)+alu0);
      float val1 = (alu3?data2[alu4]:0.000000000e0f);
      int alu5 = (alu2+1);
      bool alu6 = (alu5<alu1);
      float val2 = (alu6?data1[alu5]:0.000000000e0f);
      float val3 = (alu6?data2[(alu4+8)]:0.000000000e0f);
      int alu7 = (alu2+2);
      bool alu8 = (alu7<alu1);
      float val4 = (alu8?data1[alu7]:0.000000000e0f);
      float val5 = (alu8?data2[(alu4+16)]:0.000000000e0f);
      int alu9 = (alu2+3);
      bool alu10 = (alu9<alu1);
      float val6 = (alu10?data1[alu9]:0.000000000e0f);
      float val7 = (alu10?data2[(alu4+24)]:0.000000000e0f);
      float val8 = (alu3?data2[(alu4+1)]:0.000000000e0f);
      float val9 = (alu6?data2[(alu4+9)]:0.000000000e0f);
      float val10 = (alu8?data2[(alu4+17)]:0.000000000e0f);
      float val11 = (alu10?data2[(alu4+25)]:0.000000000e0f);
      float val12 = (alu3?data2[(alu4+2)]:0.000000000e0f);
      float val13 = (alu6?data2[(alu4+10)]:0.000000000e0f);
      float val14 = (alu8?data2[(alu4+18)]:0.000000000e0f);
      float val15 = (alu10?data2[(alu4+26)]:0.000000000e0f);
      float val16 = (alu3?data2[(alu4+3)]:0.000000000e0f);
      float val17 = (alu6?data2[(alu4+11)]:0.000000000e0f);
      float val18 = (alu8?data2[(alu4+19)]:0.000000000e0f);
      float val19 = (alu10?data2[(alu4+27)]:0.000000000e0f);
      float val20 = (alu3?data1[(alu2+16)]:0.000000000e0f);
      float val21 = (alu6?data1[(alu2+17)]:0.000000000e0f);
      float val22 = (alu8?data1[(alu2+18)]:0.000000000e0f);
      float val23 = (alu10?data1[(alu2+19)]:0.000000000e0f);
      float val24 = (alu3?data1[(alu2+32)]:0.000000000e0f);
      float val25 = (alu3?data2[(alu4+128)]:0.000000000e0f);
      float val26 = (alu6?data1[(alu2+33)]:0.000000000e0f);
      float val27 = (alu6?data2[(alu4+136)]:0.000000000e0f);
      float val28 = (alu8?data1[(alu2+34)]:0.000000000e0f);
      float val29 = (alu8?data2[(alu4+144)]:0.000000000e0f);
      float val30 = (alu10?data1[(alu2+35)]:0.000000000e0f);
      float val31 = (alu10?data2[(alu4+152)]:0.000000000e0f);
      float val32 = (alu3?data2[(alu4+129)]:0.000000000e0f);
      float val33 = (alu6?data2[(alu4+137)]:0.000000000e0f);
      float val34 = (alu8?data2[(alu4+145)]:0.000000000e0f);
      float val35 = (alu10?data2[(alu4+153)]:0.000000000e0f);
      float val36 = (alu3?data2[(alu4+130)]:0.000000000e0f);
      float val37 = (alu6?data2[(alu4+138)]:0.000000000e0f);
      float val38 = (alu8?data2[(alu4+146)]:0.000000000e0f);
      float val39 = (alu10?data2[(alu4+154)]:0.000000000e0f);
      float val40 = (alu3?data2[(alu4+131)]:0.000000000e0f);
      float val41 = (alu6?data2[(alu4+139)]:0.000000000e0f);
      float val42 = (alu8?data2[(alu4+147)]:0.000000000e0f);
      float val43 = (alu10?data2[(alu4+155)]:0.000000000e0f);
      float val44 = (alu3?data1[(alu2+48)]:0.000000000e0f);
      float val45 = (alu6?data1[(alu2+49)]:0.000000000e0f);
      float val46 = (alu8?data1[(alu2+50)]:0.000000000e0f);
      float val47 = (alu10?data1[(alu2+51)]:0.000000000e0f);
      acc0 = (acc0+((((alu3?(val44*val40):0.000000000e0f)+(alu6?(val45*val41):0.000000000e0f))+(alu8?(val46*val42):0.000000000e0f))+(alu10?(val47*val43):0.000000000e0f)));
      acc1 = (acc1+((((alu3?(val44*val36):0.000000000e0f)+(alu6?(val45*val37):0.000000000e0f))+(alu8?(val46*val38):0.000000000e0f))+(alu10?(val47*val39):0.000000000e0f)));
      acc2 = (acc2+((((alu3?(val44*val32):0.000000000e0f)+(alu6?(val45*val33):0.000000000e0f))+(alu8?(val46*val34):0.000000000e0f))+(alu10?(val47*val35):0.000000000e0f)));
      acc3 = (acc3+((((alu3?val44:0.000000000e0f)+(alu6?val45:0.000000000e0f))+(alu8?val46:0.000000000e0f))+(alu10?val47:0.000000000e0f)));
      acc4 = (acc4+((((alu3?(val44*val25):0.000000000e0f)+(alu6?(val45*val27):0.000000000e0f))+(alu8?(val46*val29):0.000000000e0f))+(alu10?(val47*val31):0.000000000e0f)));
      acc5 = (acc5+((((alu3?(val24*val40):0.000000000e0f)+(alu6?(val26*val41):0.000000000e0f))+(alu8?(val28*val42):0.000000000e0f))+(alu10?(val30*val43):0.000000000e0f)));
      acc6 = (acc6+((((alu3?(val24*val36):0.000000000e0f)+(alu6?(val26*val37):0.000000000e0f))+(alu8?(val28*val38):0.000000000e0f))+(alu10?(val30*val39):0.000000000e0f)));
      acc7 = (acc7+((((alu3?(val24*val32):0.000000000e0f)+(alu6?(val26*val33):0.000000000e0f))+(alu8?(val28*val34):0.000000000e0f))+(alu10?(val30*val35):0.000000000e0f)));
      acc8 = (acc8+((((alu3?val24:0.000000000e0f)+(alu6?val26:0.000000000e0f))+(alu8?val28:0.000000000e0f))+(alu10?val30:0.000000000e0f)));
      acc9 = (acc9+((((alu3?(val24*val25):0.000000000e0f)+(alu6?(val26*val27):0.000000000e0f))+(alu8?(val28*val29):0.000000000e0f))+(alu10?(val30*val31):0.000000000e0f)));
      acc10 = (acc10+((((alu3?(val20*val16):0.000000000e0f)+(alu6?(val21*val17):0.000000000e0f))+(alu8?(val22*val18):0.000000000e0f))+(alu10?(val23*val19):0.000000000e0f)));
      acc11 = (acc11+((((alu3?(val20*val12):0.000000000e0f)+(alu6?(val21*val13):0.000000000e0f))+(alu8?(val22*val14):0.000000000e0f))+(alu10?(val23*val15):0.000000000e0f)));
      acc12 = (acc12+((((alu3?(val20*val8):0.000000000e0f)+(alu6?(val21*val9):0.000000000e0f))+(alu8?(val22*val10):0.000000000e0f))+(alu10?(val23*val11):0.000000000e0f)));
      acc13 = (acc13+((((alu3?val20:0.000000000e0f)+(alu6?val21:0.000000000e0f))+(alu8?val22:0.000000000e0f))+(alu10?val23:0.000000000e0f)));
      acc14 = (acc14+((((alu3?(val20*val1):0.000000000e0f)+(alu6?(val21*val3):0.000000000e0f))+(alu8?(val22*val5):0.000000000e0f))+(alu10?(val23*val7):0.000000000e0f)));
      acc15 = (acc15+((((alu3?(val0*val16):0.000000000e0f)+(alu6?(val2*val17):0.000000000e0f))+(alu8?(val4*val18):0.000000000e0f))+(alu10?(val6*val19):0.000000000e0f)));
      acc16 = (acc16+((((alu3?(val0*val12):0.000000000e0f)+(alu6?(val2*val13):0.000000000e0f))+(alu8?(val4*val14):0.000000000e0f))+(alu10?(val6*val15):0.000000000e0f)));
      acc17 = (acc17+((((alu3?(val0*val8):0.000000000e0f)+(alu6?(val2*val9):0.000000000e0f))+(alu8?(val4*val10):0.000000000e0f))+(alu10?(val6*val11):0.000000000e0f)));
      acc18 = (acc18+((((alu3?val0:0.000000000e0f)+(alu6?val2:0.000000000e0f))+(alu8?val4:0.000000000e0f))+(alu10?val6:0.000000000e0f)));
      acc19 = (acc19+((((alu3?(val0*val1):0.000000000e0f)+(alu6?(val2*val3):0.000000000e0f))+(alu8?(val4*val5):0.000000000e0f))+(alu10?(val6*val7):0.000000000e0f)));
    }
  }
  data0[alu0] = (acc19/acc18);
  data0[(alu0+1)] = (acc17/acc18);
  data0[(alu0+2)] = (acc16/acc18);
  data0[(alu0+3)] = (acc15/acc18);
  data0[(alu0+8)] = (acc14/acc13);
  data0[(alu0+9)] = (acc12/acc13);
  data0[(alu0+10)] = (acc11/acc13);
  data0[(alu0+11)] = (acc10/acc13);
  data0[(alu0+16)] = (acc9/acc8);
  data0[(alu0+17)] = (acc7/acc8);
  data0[(alu0+18)] = (acc6/acc8);
  data0[(alu0+19)] = (acc5/acc8);
  data0[(alu0+24)] = (acc4/acc3);
  data0[(alu0+25)] = (acc2/acc3);
  data0[(alu0+26)] = (acc1/acc3);
  data0[(alu0+27)] = (acc0/acc3);
}
// ---- r_2_1_8
kernel void r_2_1_8(device float* data0 [[buffer(0)]], device const float* data1 [[buffer(1)]], constant int& pos [[buffer(2)]], uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 lsz [[threads_per_threadgroup]]) {
  int iidx0 = (int)(gid.x*lsz.x+lid.x); /* 2 */
  int alu0 = ((pos*8)+(iidx0*128));
  float val0 = data1[alu0];
  float val1 = data1[(alu0+1)];
  float val2 = data1[(alu0+2)];
  float val3 = data1[(alu0+3)];
  float val4 = data1[(alu0+4)];
  float val5 = data1[(alu0+5)];
  float val6 = data1[(alu0+6)];
  float val7 = data1[(alu0+7)];
  float acc0;
  acc0 = 0.000000000e0f;
  for (int ridx3 = 0; ridx3 < 1; ridx3++) {
    acc0 = (acc0+(((((((val0+val1)+val2)+val3)+val4)+val5)+val6)+val7));
  }
  data0[iidx0] = acc0;
}
