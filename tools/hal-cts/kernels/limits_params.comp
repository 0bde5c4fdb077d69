// Value parameters filling 128 bytes of push constants, the size every Vulkan device allows
// (maxPushConstantsSize is at least 128; hal does not report a device's own limit), in an
// order of 32-bit unsigned, signed and float members (area Limits). One thread writes each
// value's bits to out[i], in parameter order.
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params {
  uint p0;
  int p1;
  float p2;
  uint p3;
  int p4;
  float p5;
  uint p6;
  int p7;
  float p8;
  uint p9;
  int p10;
  float p11;
  uint p12;
  int p13;
  float p14;
  uint p15;
  int p16;
  float p17;
  uint p18;
  int p19;
  float p20;
  uint p21;
  int p22;
  float p23;
  uint p24;
  int p25;
  float p26;
  uint p27;
  int p28;
  float p29;
  uint p30;
  int p31;
};
void main() {
  data[0] = p0;
  data[1] = uint(p1);
  data[2] = floatBitsToUint(p2);
  data[3] = p3;
  data[4] = uint(p4);
  data[5] = floatBitsToUint(p5);
  data[6] = p6;
  data[7] = uint(p7);
  data[8] = floatBitsToUint(p8);
  data[9] = p9;
  data[10] = uint(p10);
  data[11] = floatBitsToUint(p11);
  data[12] = p12;
  data[13] = uint(p13);
  data[14] = floatBitsToUint(p14);
  data[15] = p15;
  data[16] = uint(p16);
  data[17] = floatBitsToUint(p17);
  data[18] = p18;
  data[19] = uint(p19);
  data[20] = floatBitsToUint(p20);
  data[21] = p21;
  data[22] = uint(p22);
  data[23] = floatBitsToUint(p23);
  data[24] = p24;
  data[25] = uint(p25);
  data[26] = floatBitsToUint(p26);
  data[27] = p27;
  data[28] = uint(p28);
  data[29] = floatBitsToUint(p29);
  data[30] = p30;
  data[31] = uint(p31);
}
