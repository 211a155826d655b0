// The host's control costs around each stage of a schedule, from seed 004
// (VCSN) Table 5 and eq. 6: a stage is set up by the host and completed by
// an interrupt and an MPI_Barrier among the servers; the interrupt's cost is
// inside the seed's measured barrier correction, which is why it has no
// parameter of its own.
#pragma once

namespace fpgacomm::fabric {

struct HostCosts {
  double crossbar_setup = 0.0;            // c: configure the node's crossbar
  double topology_reconfiguration = 0.0;  // t: write the MAC tables (virtual topology)
  double barrier_per_round = 0.0;         // eq. 6 slope per ceil(log2 N) round
  double barrier_base = 0.0;              // eq. 6 constant
  // Measured correction: added to every barrier, by how long the
  // synchronised work was (seed 004 section 6.3, Fig. 19).
  double barrier_extra_long = 0.0;
  double barrier_extra_short = 0.0;
  double long_work_threshold = 0.0;
  int fpgas_per_server = 1;

  int servers(int fpgas) const { return (fpgas + fpgas_per_server - 1) / fpgas_per_server; }
  // One MPI_Barrier among `servers` after `work` seconds of synchronised work.
  double barrier(int servers, double work) const;
  void validate() const;
};

}  // namespace fpgacomm::fabric
