#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace fpgacomm {

// "run it with mpirun -np RANKS", and where Slurm is present (inside a job,
// or srun on the PATH) its srun form too, so that a batch script run without
// a launcher learns the command that works there. Open MPI as Debian builds
// it reaches Slurm through PMIx only, hence --mpi=pmix.
inline std::string run_it_with(const std::string& ranks) {
  std::string hint = "run it with mpirun -np " + ranks;
  bool slurm = std::getenv("SLURM_JOB_ID") != nullptr;
  const char* path = std::getenv("PATH");
  std::string rest = path ? path : "";
  while (!slurm && !rest.empty()) {
    std::size_t colon = rest.find(':');
    std::string folder = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    slurm = !folder.empty() && access((folder + "/srun").c_str(), X_OK) == 0;
  }
  return slurm ? hint + " or srun -n " + ranks + " --mpi=pmix" : hint;
}

}  // namespace fpgacomm
