// Every collective of the table is complete and consistent, and a name not
// in it is an error, never a default.
#include <set>
#include <string>

#include "bench/collective_table.hpp"
#include "check.hpp"
#include "core/choices.hpp"
#include "core/error.hpp"

using namespace fpgacomm;

namespace {

bool same_everywhere(const BufferShape& buffer) { return buffer.root == buffer.other; }

void check_entry(const Collective& c) {
  CHECK(!c.name.empty() && !c.title.empty() && !c.summary.empty());
  CHECK(c.mpi_call.rfind("MPI_", 0) == 0);
  CHECK(c.call != nullptr);
  // Bytes, a bus factor and data move together.
  CHECK(moves_data(c) == (c.nccl_bytes != Blocks::None));
  CHECK(moves_data(c) == (c.bus_factor != nullptr));
  CHECK(c.nccl_bytes != Blocks::Share);
  // Without a root, the root's buffers are everyone's.
  if (!c.rooted) CHECK(same_everywhere(c.send) && same_everywhere(c.recv));
  // Every rank that moves data sends or receives something.
  if (moves_data(c)) {
    CHECK(c.send.root != Blocks::None || c.recv.root != Blocks::None);
    CHECK(c.send.other != Blocks::None || c.recv.other != Blocks::None);
  }
  for (int ranks : {1, 2, 3, 8, 1024}) {
    const auto factor = bus_factor(c, ranks);
    CHECK(factor.has_value() == moves_data(c));
    if (factor) CHECK(*factor >= 0 && *factor <= 2);
  }
  for (const std::string& flag : c.omb_lacks) CHECK(flag == "-l" || flag == "-D");
  CHECK(&collective(c.name) == &c);
}

}  // namespace

int main() {
  std::set<std::string> names;
  for (const Collective& c : collectives()) {
    check_entry(c);
    CHECK(names.insert(c.name).second);  // no name twice
  }
  CHECK(names.size() == collective_ops().size());

  // nccl-tests' figures (its doc/PERFORMANCE.md), on 4 ranks.
  CHECK(*bus_factor(collective("allreduce"), 4) == 1.5);
  for (const char* op : {"allgather", "reduce_scatter", "alltoall", "gather", "scatter"})
    CHECK(*bus_factor(collective(op), 4) == 0.75);
  CHECK(*bus_factor(collective("bcast"), 4) == 1.0 && *bus_factor(collective("reduce"), 4) == 1.0);
  CHECK(*nccl_bytes(collective("alltoall"), 8, 4) == 32 && *nccl_bytes(collective("allreduce"), 8, 4) == 8);
  CHECK(!nccl_bytes(collective("barrier"), 0, 4) && !bus_factor(collective("barrier"), 4));
  CHECK(holds_every_rank(collective("gather")) && !holds_every_rank(collective("bcast")));
  CHECK(shares(collective("reduce_scatter")) && !shares(collective("allreduce")));

  // An unknown name, or no ranks, is a usage error naming the choices.
  CHECK_THROWS(UsageError, collective("gossip"),
               "unknown collective 'gossip'; choose " + choice_list(collective_ops()));
  CHECK_THROWS(UsageError, bus_factor(collective("allreduce"), 0), "ranks must be at least 1");
  return check::failures;
}
