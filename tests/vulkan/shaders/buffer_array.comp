#version 450
// An array of storage buffers in one binding: not a hal kernel parameter list.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Y { uint y[]; } buffers[2];
void main() { buffers[1].y[0] = buffers[0].y[0]; }
