// The queueing validation of seed 003 eq. 5: the mean wait at one output
// under Poisson arrivals. With exponential packet lengths the simulation
// must match M/M/1; with fixed lengths it matches M/D/1
// (Pollaczek-Khinchine), half the M/M/1 wait: where the seed's model is
// pessimistic. Five million packets per point, batch means for the interval.
#include <cmath>
#include <iostream>

#include "check.hpp"
#include "fabric/experiments.hpp"

using namespace fpgacomm::fabric;

int main() {
  const std::uint64_t packets = 5000000;
  for (double rho : {0.3, 0.6, 0.9}) {
    const QueueResult mm1 = single_queue(rho, packets, true, 11, 50);
    // Seed 003 eq. 5: Tq = rho / (DQ - EQ), with DQ = 1/service, EQ = rho * DQ.
    const double dq = 1.0 / mm1.service_mean, eq = rho * dq;
    const double mm1_theory = rho / (dq - eq);
    const QueueResult md1 = single_queue(rho, packets, false, 11, 50);
    const double md1_theory = rho * md1.service_mean / (2.0 * (1.0 - rho));
    std::cout << "rho " << rho << ": M/M/1 wait " << mm1.mean_wait << " +- " << mm1.ci_half_width
              << " s (theory " << mm1_theory << "), M/D/1 wait " << md1.mean_wait << " +- "
              << md1.ci_half_width << " s (theory " << md1_theory << ")\n";
    CHECK(mm1.packets == packets);
    CHECK(std::abs(mm1.mean_wait / mm1_theory - 1.0) < 0.05);
    CHECK(std::abs(md1.mean_wait / md1_theory - 1.0) < 0.05);
    // The interval is honest: the theory lies within a few half-widths.
    CHECK(std::abs(mm1.mean_wait - mm1_theory) < 3.0 * mm1.ci_half_width);
    // Fixed lengths wait clearly less than the M/M/1 formula says.
    CHECK(md1.mean_wait < 0.6 * mm1_theory);
  }
  return check::failures;
}
