// b_eff's device side for --comm-type kernel (docs/METHODS.md "b_eff").
// A message of `size` bytes is HPCC FPGA's fill, log2(size) mod 256, in every
// byte, except that its first and last (up to) 8 bytes are XORed with a
// stamp of sender, direction and sequence number; src/bench/beff.cpp
// computes the same bytes on the host (beff_message_byte), and the two
// must stay in step.

uchar message_byte(ulong index, ulong size, uchar fill, ulong stamp) {
  if (index < 8) return fill ^ (uchar)(stamp >> (8 * index));
  if (index + 8 >= size) return fill ^ (uchar)(~stamp >> (8 * (size - 1 - index)));
  return fill;
}

// Writes this iteration's messages to both neighbours. Work-items stride
// through the message so neighbouring items touch neighbouring bytes.
__kernel void beff_send(__global uchar* to_right, __global uchar* to_left, ulong size, uchar fill,
                        ulong stamp_right, ulong stamp_left) {
  const ulong stride = get_global_size(0);
  for (ulong i = get_global_id(0); i < size; i += stride) {
    to_right[i] = message_byte(i, size, fill, stamp_right);
    to_left[i] = message_byte(i, size, fill, stamp_left);
  }
}

// Counts the bytes of both received messages that differ from what their
// senders must have written in this iteration, into errors[0].
__kernel void beff_recv(__global const uchar* from_left, __global const uchar* from_right, ulong size,
                        uchar fill, ulong stamp_left, ulong stamp_right, __global uint* errors) {
  const ulong stride = get_global_size(0);
  uint wrong = 0;
  for (ulong i = get_global_id(0); i < size; i += stride) {
    wrong += from_left[i] != message_byte(i, size, fill, stamp_left);
    wrong += from_right[i] != message_byte(i, size, fill, stamp_right);
  }
  if (wrong) atomic_add(errors, wrong);
}
