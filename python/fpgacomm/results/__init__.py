"""What measurements leave: the Result (a table with parameters, units, raw
samples and environment, written atomically as JSON or CSV), the statistics
of samples, and the text reports in OSU Micro-Benchmarks' and HPCC FPGA's
formats."""
