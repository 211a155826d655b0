#include "bench/collective_table.hpp"

#include <stdexcept>

#include "core/choices.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

// nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md there).
double whole(int) { return 1.0; }
double ring_share(int ranks) { return double(ranks - 1) / ranks; }
double twice_ring_share(int ranks) { return 2.0 * (ranks - 1) / ranks; }

// One function per collective, in OSU Micro-Benchmarks' order; adding one
// is a function here and its line in collectives() below.

Collective gather() {
  Collective c;
  c.name = "gather";
  c.title = "Gather";
  c.summary = "MPI_Gather of `size` bytes from every rank to the root.";
  c.mpi_call = "MPI_Gather";
  c.call = [](const CallArgs& a) {
    return MPI_Gather(a.send, a.count, a.type, a.recv, a.count, a.type, a.root, a.comm);
  };
  c.rooted = true;
  c.send = {Blocks::One, Blocks::One};
  c.recv = {Blocks::PerRank, Blocks::None};
  c.stream = Stream::Source;
  c.nccl_bytes = Blocks::PerRank;
  c.bus_factor = ring_share;
  return c;
}

Collective scatter() {
  Collective c;
  c.name = "scatter";
  c.title = "Scatter";
  c.summary = "MPI_Scatter of `size` bytes from the root to every rank.";
  c.mpi_call = "MPI_Scatter";
  c.call = [](const CallArgs& a) {
    return MPI_Scatter(a.send, a.count, a.type, a.recv, a.count, a.type, a.root, a.comm);
  };
  c.rooted = true;
  c.send = {Blocks::PerRank, Blocks::None};
  c.recv = {Blocks::One, Blocks::One};
  c.stream = Stream::Destination;
  c.nccl_bytes = Blocks::PerRank;
  c.bus_factor = ring_share;
  return c;
}

Collective allgather() {
  Collective c;
  c.name = "allgather";
  c.title = "Allgather";
  c.summary = "MPI_Allgather of `size` bytes from every rank to every rank.";
  c.mpi_call = "MPI_Allgather";
  c.call = [](const CallArgs& a) { return MPI_Allgather(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm); };
  c.send = {Blocks::One, Blocks::One};
  c.recv = {Blocks::PerRank, Blocks::PerRank};
  c.stream = Stream::Source;
  c.nccl_bytes = Blocks::PerRank;
  c.bus_factor = ring_share;
  return c;
}

Collective alltoall() {
  Collective c;
  c.name = "alltoall";
  c.title = "All-to-All Personalized Exchange";
  c.summary = "MPI_Alltoall with blocks of `size` bytes between every pair of ranks.";
  c.mpi_call = "MPI_Alltoall";
  c.call = [](const CallArgs& a) { return MPI_Alltoall(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm); };
  c.send = {Blocks::PerRank, Blocks::PerRank};
  c.recv = {Blocks::PerRank, Blocks::PerRank};
  c.stream = Stream::Pair;
  c.nccl_bytes = Blocks::PerRank;
  c.bus_factor = ring_share;
  return c;
}

Collective bcast() {
  Collective c;
  c.name = "bcast";
  c.title = "Broadcast";
  c.summary = "MPI_Bcast of `size` bytes from the root.";
  c.mpi_call = "MPI_Bcast";
  c.call = [](const CallArgs& a) { return MPI_Bcast(a.at_root ? a.send : a.recv, a.count, a.type, a.root, a.comm); };
  c.rooted = true;
  c.send = {Blocks::One, Blocks::None};
  c.recv = {Blocks::None, Blocks::One};
  c.stream = Stream::Source;
  c.nccl_bytes = Blocks::One;
  c.bus_factor = whole;
  c.omb_lacks = {"-l"};
  return c;
}

Collective reduce() {
  Collective c;
  c.name = "reduce";
  c.title = "Reduce";
  c.summary = "MPI_Reduce (sum) of a `size`-byte vector to the root.";
  c.mpi_call = "MPI_Reduce";
  c.call = [](const CallArgs& a) { return MPI_Reduce(a.send, a.recv, a.count, a.type, MPI_SUM, a.root, a.comm); };
  c.rooted = true;
  c.reduces = true;
  c.send = {Blocks::One, Blocks::One};
  c.recv = {Blocks::One, Blocks::None};
  c.nccl_bytes = Blocks::One;
  c.bus_factor = whole;
  c.omb_lacks = {"-D"};
  return c;
}

Collective allreduce() {
  Collective c;
  c.name = "allreduce";
  c.title = "Allreduce";
  c.summary = "MPI_Allreduce (sum) of a `size`-byte vector.";
  c.mpi_call = "MPI_Allreduce";
  c.call = [](const CallArgs& a) { return MPI_Allreduce(a.send, a.recv, a.count, a.type, MPI_SUM, a.comm); };
  c.reduces = true;
  c.send = {Blocks::One, Blocks::One};
  c.recv = {Blocks::One, Blocks::One};
  c.nccl_bytes = Blocks::One;
  c.bus_factor = twice_ring_share;
  c.omb_lacks = {"-D"};
  return c;
}

Collective reduce_scatter() {
  Collective c;
  c.name = "reduce_scatter";
  c.title = "Reduce_scatter";
  c.summary =
      "MPI_Reduce_scatter (sum) of a `size`-byte vector, each rank keeping a nearly equal block of elements (the "
      "first (elements mod N) ranks one more).";
  c.mpi_call = "MPI_Reduce_scatter";
  // Casting away const: MPI-2's prototype, still some libraries' (the counts are only read).
  c.call = [](const CallArgs& a) {
    return MPI_Reduce_scatter(a.send, a.recv, const_cast<int*>(a.counts), a.type, MPI_SUM, a.comm);
  };
  c.reduces = true;
  c.send = {Blocks::One, Blocks::One};
  c.recv = {Blocks::Share, Blocks::Share};
  // nccl-tests' total is the vector each rank contributes: count * N of its blocks.
  c.nccl_bytes = Blocks::One;
  c.bus_factor = ring_share;
  c.omb_lacks = {"-D"};
  return c;
}

Collective barrier() {
  Collective c;
  c.name = "barrier";
  c.title = "Barrier";
  c.summary = "MPI_Barrier: one row of size 0.";
  c.mpi_call = "MPI_Barrier";
  c.call = [](const CallArgs& a) { return MPI_Barrier(a.comm); };
  c.omb_lacks = {"-l", "-D"};
  return c;
}

void require_ranks(int ranks) {
  if (ranks < 1) throw UsageError("ranks must be at least 1, got " + std::to_string(ranks));
}

bool holds(const BufferShape& buffer, Blocks blocks) { return buffer.root == blocks || buffer.other == blocks; }

}  // namespace

const std::vector<Collective>& collectives() {
  static const std::vector<Collective> table = {gather(), scatter(),   allgather(),      alltoall(), bcast(),
                                                reduce(), allreduce(), reduce_scatter(), barrier()};
  return table;
}

const Collective& collective(const std::string& name) {
  for (const Collective& known : collectives())
    if (known.name == name) return known;
  throw UsageError("unknown collective '" + name + "'; choose " + choice_list(collective_ops()));
}

std::vector<std::string> collective_ops() {
  std::vector<std::string> names;
  for (const Collective& known : collectives()) names.push_back(known.name);
  return names;
}

std::vector<std::string> rooted_collective_ops() {
  std::vector<std::string> names;
  for (const Collective& known : collectives())
    if (known.rooted) names.push_back(known.name);
  return names;
}

bool moves_data(const Collective& c) {
  for (Blocks blocks : {c.send.root, c.send.other, c.recv.root, c.recv.other})
    if (blocks != Blocks::None) return true;
  return false;
}

bool holds_every_rank(const Collective& c) { return holds(c.send, Blocks::PerRank) || holds(c.recv, Blocks::PerRank); }

bool shares(const Collective& c) { return holds(c.send, Blocks::Share) || holds(c.recv, Blocks::Share); }

std::optional<std::uint64_t> nccl_bytes(const Collective& c, std::uint64_t size, int ranks) {
  require_ranks(ranks);
  switch (c.nccl_bytes) {
    case Blocks::One:
      return size;
    case Blocks::PerRank:
      return size * static_cast<std::uint64_t>(ranks);
    case Blocks::None:
      return std::nullopt;
    case Blocks::Share:
      break;
  }
  throw std::logic_error("collective " + c.name + ": nccl-tests' bytes are One or PerRank messages, or None");
}

std::optional<double> bus_factor(const Collective& c, int ranks) {
  require_ranks(ranks);
  if (!c.bus_factor) return std::nullopt;
  return c.bus_factor(ranks);
}

}  // namespace fpgacomm
