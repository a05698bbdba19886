// memory_limit.hpp — the memory a run may use: what this machine (or its container) has
// available now, and a size as a person writes it on a command line.
//
//   available_memory_bytes()      // MemAvailable of /proc/meminfo, or less under a cgroup limit
//   parse_memory_size("20GB")     // 20e9;  "512MB" 512e6;  "1.5GiB" 1.5·2³⁰;  "0", "none": no limit
//
// MemAvailable is the kernel's estimate of what can be allocated without swapping (free
// memory plus the page cache and slabs it can reclaim); in a container the cgroup's limit
// (memory.max, cgroup v2) minus what the cgroup uses already (memory.current) can be lower.
#pragma once

#include <optional>
#include <string>

namespace tapegrad::training {

// Bytes available to this process now; 0 when /proc/meminfo cannot be read.
double available_memory_bytes();

// A size in bytes: a number with an optional unit B, kB/KB, MB, GB, TB (powers of 1000) or
// KiB, MiB, GiB, TiB (powers of 1024), case-insensitive, spaces allowed before the unit.
// "0", "none" and "off" mean no limit (nullopt). Throws std::invalid_argument saying what is
// wanted and what was given.
std::optional<double> parse_memory_size(const std::string& text);

}  // namespace tapegrad::training
