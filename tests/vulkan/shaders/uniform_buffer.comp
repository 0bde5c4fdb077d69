#version 450
// Reads a uniform buffer: not a hal kernel (parameters are storage buffers and push constants).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform Settings { uint scale; } settings;
layout(set = 0, binding = 1) buffer Y { uint y[]; };
void main() { y[0] = settings.scale; }
