// Every OSU collective, one entry each (collective_table.cpp): the MPI call it
// times, what each rank's buffers hold, nccl-tests' byte base and bus
// bandwidth factor, and the options of OSU Micro-Benchmarks' test that it
// lacks. The timed loop (collectives.cpp), the Python package (through
// _core.collectives()) and the command line read these entries; an unknown
// name is a UsageError, never a default. docs/METHODS.md, "Collectives",
// writes the same facts as formulas.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fpgacomm {

// A buffer's size in messages of OMB's `size` bytes (whole elements).
enum class Blocks {
  None,     // no buffer
  One,      // one message
  PerRank,  // one message of every rank, in rank order
  // This rank's share of the vector: its elements split into nearly equal
  // blocks, the first (elements mod ranks) one element larger.
  Share,
};

// A buffer at the root and at the other ranks (alike where there is no root).
struct BufferShape {
  Blocks root = Blocks::None;
  Blocks other = Blocks::None;
};

// What tells one block of a validated message from another (the stream of
// pattern_byte): the rank that sent it, the rank it is for, or both. A
// buffer of one block received came from the root; one sent goes to it.
enum class Stream { Source, Destination, Pair };

// One call's arguments, as the timed loop holds them.
struct CallArgs {
  void* send = nullptr;
  void* recv = nullptr;
  int count = 0;  // elements of one message
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int root = 0;
  bool at_root = false;  // this rank is the root
  // Each rank's block in elements (its Share where a buffer holds shares,
  // else `count`), and where each starts in a buffer of every rank's: the
  // arrays of reduce_scatter and of MPI's v-collectives, made before the
  // timed region.
  const int* counts = nullptr;
  const int* displacements = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
};

struct Collective {
  std::string name;                        // OSU Micro-Benchmarks' test without "osu_"
  std::string title;                       // OMB's title before " Latency Test"
  std::string summary;                     // one line: what it does (the Python function's docstring)
  std::string mpi_call;                    // the routine, as errors name it
  int (*call)(const CallArgs&) = nullptr;  // one call; reductions sum (MPI_SUM)
  bool rooted = false;
  bool reduces = false;  // sums elements; validated by their sums, else by Stream
  BufferShape send, recv;
  Stream stream = Stream::Source;
  // nccl-tests' bytes, divided by the time for algbw: One (size) or PerRank
  // (size * ranks); None for a collective that moves no data.
  Blocks nccl_bytes = Blocks::None;
  // nccl-tests' busbw / algbw on `ranks` ranks; null where there are no bytes.
  double (*bus_factor)(int ranks) = nullptr;
  // The options of OMB's collectives (cli/osu.py, REFUSED) that OMB 7.4
  // does not give this test, so fpgacomm neither takes nor refuses them.
  std::vector<std::string> omb_lacks;
};

// In OSU Micro-Benchmarks' order.
const std::vector<Collective>& collectives();
// The entry of `name`; a UsageError naming the known ones for any other.
const Collective& collective(const std::string& name);

// The names of collectives(), and of those with a root.
std::vector<std::string> collective_ops();
std::vector<std::string> rooted_collective_ops();

// Whether any rank's buffer holds data (the barrier's do not).
bool moves_data(const Collective& c);
// Whether some rank's buffer holds a message of every rank (OMB's -M caps
// these at the limit / ranks).
bool holds_every_rank(const Collective& c);
// Whether a buffer holds a rank's Share, so the call needs every rank's.
bool shares(const Collective& c);
// nccl-tests' bytes of OMB's size on `ranks` ranks; none without data.
std::optional<std::uint64_t> nccl_bytes(const Collective& c, std::uint64_t size, int ranks);
// nccl-tests' bus bandwidth factor on `ranks` ranks; none without data.
std::optional<double> bus_factor(const Collective& c, int ranks);

}  // namespace fpgacomm
