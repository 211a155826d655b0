// HPCC FPGA's ring b_eff on real ranks (HPCC FPGA's b_eff documentation, docs/METHODS.md "b_eff"):
// every rank exchanges a message with its left and its right neighbour in
// every iteration, `loop_length` iterations per measured execution, an MPI
// barrier before each. Raw per-rank times come out; the reduction to T(m),
// B(m) and b_eff is Python's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/size_hook.hpp"
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"
#include "comm/transfer.hpp"

namespace fpgacomm {

// cpu: host buffers, MPI only. pcie: device buffers staged through the host
// on every exchange. kernel: as pcie, and a send kernel writes each message
// on the device while a receive kernel checks it there (kernels/beff.cl).
// iec: HPCC FPGA's IEC mode, send and receive kernels streaming every
// message over Intel external channels (kernels/beff_iec.cl), one launch per
// measured execution; the host only launches them, MPI only synchronises.
// Its channels must be cabled (a board) or joined (the emulator's channel
// files: the caller's working directory holds them, see beff_iec.py).
enum class BeffType { Cpu, Pcie, Kernel, Iec };
// A name no type has is an agreed UsageError naming every type and sim,
// the simulated ring, which Python runs on the fabric simulator instead.
BeffType parse_beff_type(const std::string& name);
std::string beff_type_name(BeffType type);
std::vector<std::string> beff_type_names();  // in BeffType's order

struct BeffOptions {
  BeffType type = BeffType::Cpu;
  std::vector<std::uint64_t> sizes;
  // Per size; 0 asks for the adaptive rule: as many iterations as take
  // `target_time` seconds, found by timing doubling trial loops.
  std::vector<std::uint64_t> loop_lengths;
  double target_time = 0.2;
  std::uint64_t max_loop_length = 65536;  // the adaptive rule's ceiling
  int repetitions = 10;
  // Untimed iterations per size in which every message is stamped by its
  // sender and checked whole by its receiver (cpu and pcie; kernel checks
  // every message of every iteration on the device as well).
  int validation_iterations = 4;
  std::vector<int> ring;  // ring_order(): the rank at each position
  int bank = 0;
  TransferOptions transfer;  // chunk and slots; pcie and kernel always stage

  // Throws UsageError naming the first parameter no run can take, and its
  // fix; what depends on the ranks is checked when the run starts.
  void validate() const;
};

struct BeffSize {
  std::uint64_t size = 0;
  std::uint64_t loop_length = 0;
  // times[rank][repetition]: seconds for loop_length iterations, every rank's.
  std::vector<std::vector<double>> times;
  std::uint64_t errors = 0;  // wrong bytes received, summed over ranks
};

struct BeffRun {
  std::vector<BeffSize> sizes;
  std::uint64_t chunk_bytes = 0;
  std::string route;  // how messages reach MPI: direct or staged
};

// Collective over `comm`; every rank gets the same BeffRun, and calls
// on_size (when set) after each size with its timing.
BeffRun run_beff(const Communicator& comm, Device* device, const BeffOptions& options,
                 const SizeHook<BeffSize>& on_size = {});

// The message a sender puts on the wire: every byte is HPCC FPGA's fill,
// log2(size) mod 256, except the first and the last (up to) 8 bytes, which
// carry the fill XOR a stamp of the sender, the direction (0: towards the
// right neighbour, 1: towards the left) and the sequence number of the
// exchange, so a lost, duplicated, stale or misrouted message does not pass.
std::uint64_t beff_stamp(int sender, int direction, std::uint64_t sequence);
std::uint8_t beff_message_byte(std::uint64_t index, std::uint64_t size, std::uint64_t stamp);

}  // namespace fpgacomm
