// The host's control costs around each stage of a schedule, from the VCSN paper
// (VCSN) Table 5 and eq. 6: a stage is set up by the host and completed by
// an interrupt (the destination's write is done) and an MPI_Barrier among
// the servers. The seed gives no figure for the interrupt: its cost is
// inside the measured barrier correction, so the presets leave it at 0.
#pragma once

namespace fpgacomm::fabric {

struct HostCosts {
  double crossbar_setup = 0.0;            // c: configure the node's crossbar
  double topology_reconfiguration = 0.0;  // t: write the MAC tables (virtual topology)
  double interrupt = 0.0;                 // from a stage's last write to its host's knowing it
  double barrier_per_round = 0.0;         // eq. 6 slope per ceil(log2 N) round
  double barrier_base = 0.0;              // eq. 6 constant
  // Measured correction: added to every barrier, by how long the
  // synchronised work was (the VCSN paper section 6.3, Fig. 19).
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
