// Push constants of any size, to find the device's limit (area Limits; SPIR-V only: PTX has no
// specialization constants). The one value parameter is an array of kWords 32-bit words, set
// at load, so the push-constant block is 4 * kWords bytes; one thread copies it to out.
#version 450
layout(local_size_x = 1) in;
layout(constant_id = 0) const uint kWords = 32u;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint v[kWords]; };
void main() {
  for (uint i = 0u; i < kWords; ++i) data[i] = v[i];
}
