#include "fabric/host.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace fpgacomm::fabric {

double HostCosts::barrier(int servers, double work) const {
  if (servers < 1) throw UsageError("fabric: a barrier needs at least 1 server");
  const double rounds = std::ceil(std::log2(static_cast<double>(servers)));
  const double extra = work > long_work_threshold ? barrier_extra_long : barrier_extra_short;
  return barrier_per_round * rounds + barrier_base + extra;
}

void HostCosts::validate() const {
  for (double value : {crossbar_setup, topology_reconfiguration, interrupt, barrier_per_round, barrier_base,
                       barrier_extra_long, barrier_extra_short, long_work_threshold}) {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      throw UsageError("fabric: host costs must be finite and 0 or more, got " + std::to_string(value));
    }
  }
  if (fpgas_per_server < 1) {
    throw UsageError("fabric: fpgas_per_server must be at least 1, not " + std::to_string(fpgas_per_server));
  }
}

}  // namespace fpgacomm::fabric
