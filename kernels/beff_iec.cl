// b_eff's IEC type (fpgacomm beff --comm-type iec; docs/METHODS.md "b_eff"),
// after HPCC FPGA's b_eff documentation ("Implementation Details"): a send
// and a receive kernel per ring direction stream every message over two
// Intel external serial channels, CHANNEL_WIDTH bytes per channel write; the
// host only launches them. The channel names are those of the BittWare 520N's
// board support package, so this file is what `aoc` compiles for that board
// (then `fpgacomm beff --comm-type iec --binary beff_iec.aocx`); fpgacomm
// builds it from source for Intel's FPGA emulator, whose io channels are
// files in the working directory, which fpgacomm joins across ranks.
//
// Cabling of a ring (and of one board in loopback: output N to input N^1):
//   kernel_output_ch0, ch2 -> the right neighbour's kernel_input_ch1, ch3
//   kernel_output_ch1, ch3 -> the left neighbour's kernel_input_ch0, ch2
//
// A message of `size` bytes goes as ceil(size / (2 CHANNEL_WIDTH)) rounds of
// one write per channel; bytes past the message are zero padding. Its bytes
// are b_eff's message (src/bench/beff.cpp, beff_message_byte, and
// kernels/beff.cl, with which this must stay in step): log2(size) mod 256,
// the first and last (up to) 8 bytes XORed with a stamp of sender, direction
// and sequence number, which each kernel computes (beff_stamp) so that the
// receiver checks every byte of every message.
#pragma OPENCL EXTENSION cl_intel_channels : enable

#define CHANNEL_WIDTH 32  // bytes per write: the 520N's 256-bit channels

typedef struct {
  uchar bytes[CHANNEL_WIDTH];
} flit;

channel flit to_right_a __attribute__((depth(0))) __attribute__((io("kernel_output_ch0")));
channel flit to_right_b __attribute__((depth(0))) __attribute__((io("kernel_output_ch2")));
channel flit to_left_a __attribute__((depth(0))) __attribute__((io("kernel_output_ch1")));
channel flit to_left_b __attribute__((depth(0))) __attribute__((io("kernel_output_ch3")));
channel flit from_left_a __attribute__((depth(0))) __attribute__((io("kernel_input_ch1")));
channel flit from_left_b __attribute__((depth(0))) __attribute__((io("kernel_input_ch3")));
channel flit from_right_a __attribute__((depth(0))) __attribute__((io("kernel_input_ch0")));
channel flit from_right_b __attribute__((depth(0))) __attribute__((io("kernel_input_ch2")));

#define RIGHTWARD 0
#define LEFTWARD 1

ulong mix(ulong x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9UL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBUL;
  return x ^ (x >> 31);
}

ulong beff_stamp(uint sender, uint direction, ulong sequence) {
  const ulong origin = ((ulong)sender << 1) | direction;
  const ulong low = (mix(origin) + sequence) & 0xFF;
  return (mix(mix(sequence) ^ origin) & ~(ulong)0xFF) | low;
}

uchar seed_fill(ulong size) {
  uchar log2 = 0;
  while ((size >> (log2 + 1)) != 0) ++log2;
  return log2;
}

uchar message_byte(ulong index, ulong size, uchar fill, ulong stamp) {
  if (index < 8) return fill ^ (uchar)(stamp >> (8 * index));
  if (index + 8 >= size) return fill ^ (uchar)(~stamp >> (8 * (size - 1 - index)));
  return fill;
}

ulong rounds_of(ulong size) { return (size + 2 * CHANNEL_WIDTH - 1) / (2 * CHANNEL_WIDTH); }

// The flit of a message that starts at byte `first`; zero past its end.
flit message_flit(ulong first, ulong size, uchar fill, ulong stamp) {
  flit f;
#pragma unroll
  for (uint k = 0; k < CHANNEL_WIDTH; ++k)
    f.bytes[k] = first + k < size ? message_byte(first + k, size, fill, stamp) : 0;
  return f;
}

// Bytes of a received flit that differ from the message's.
uint wrong_bytes(flit f, ulong first, ulong size, uchar fill, ulong stamp) {
  uint wrong = 0;
#pragma unroll
  for (uint k = 0; k < CHANNEL_WIDTH; ++k)
    wrong += first + k < size && f.bytes[k] != message_byte(first + k, size, fill, stamp);
  return wrong;
}

// `loops` messages of `size` bytes from `sender`, sequence numbers
// first_sequence, first_sequence + 1, ...
#define SEND_KERNEL(name, direction, channel_a, channel_b)                                       \
  __attribute__((max_global_work_dim(0))) __kernel void name(ulong size, ulong loops,            \
                                                             ulong first_sequence, uint sender) { \
    const uchar fill = seed_fill(size);                                                          \
    const ulong rounds = rounds_of(size);                                                        \
    for (ulong loop = 0; loop < loops; ++loop) {                                                 \
      const ulong stamp = beff_stamp(sender, direction, first_sequence + loop);                  \
      for (ulong round = 0; round < rounds; ++round) {                                           \
        write_channel_intel(channel_a, message_flit(2 * round * CHANNEL_WIDTH, size, fill, stamp)); \
        write_channel_intel(channel_b,                                                           \
                            message_flit((2 * round + 1) * CHANNEL_WIDTH, size, fill, stamp));   \
      }                                                                                          \
    }                                                                                            \
  }

// Receives `loops` messages from `sender` and adds the wrong bytes to
// errors[direction] (one slot per receive kernel, as both run at once).
#define RECV_KERNEL(name, direction, channel_a, channel_b)                                             \
  __attribute__((max_global_work_dim(0))) __kernel void name(ulong size, ulong loops,                  \
                                                             ulong first_sequence, uint sender,        \
                                                             __global uint* restrict errors) {         \
    const uchar fill = seed_fill(size);                                                                \
    const ulong rounds = rounds_of(size);                                                              \
    uint wrong = 0;                                                                                    \
    for (ulong loop = 0; loop < loops; ++loop) {                                                       \
      const ulong stamp = beff_stamp(sender, direction, first_sequence + loop);                        \
      for (ulong round = 0; round < rounds; ++round) {                                                 \
        wrong += wrong_bytes(read_channel_intel(channel_a), 2 * round * CHANNEL_WIDTH, size, fill, stamp); \
        wrong += wrong_bytes(read_channel_intel(channel_b), (2 * round + 1) * CHANNEL_WIDTH, size, fill,  \
                             stamp);                                                                   \
      }                                                                                                \
    }                                                                                                  \
    errors[direction] += wrong;                                                                        \
  }

SEND_KERNEL(beff_iec_send_right, RIGHTWARD, to_right_a, to_right_b)
SEND_KERNEL(beff_iec_send_left, LEFTWARD, to_left_a, to_left_b)
// A message from the left neighbour travelled rightward, and the other way round.
RECV_KERNEL(beff_iec_recv_left, RIGHTWARD, from_left_a, from_left_b)
RECV_KERNEL(beff_iec_recv_right, LEFTWARD, from_right_a, from_right_b)
