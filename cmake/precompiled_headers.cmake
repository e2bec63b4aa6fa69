# One precompiled header for every C++ target of the project: libpqxx, nlohmann-json and fmt
# are most of what each translation unit parses (a family binary spent two thirds of its 7-9 s
# in the front end), so they are parsed once per build instead of once per unit
# (tests/README.md, "Time"). Targets share it with REUSE_FROM, so they must share its compile
# flags: shardctl_core's definitions (PQXX_HAVE_OPTIONAL changes libpqxx's headers) and the
# global options. Test targets compile at another -O level and share a second header (below).
add_library(shardctl_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json)
target_precompile_headers(shardctl_pch PRIVATE
  <pqxx/pqxx> <nlohmann/json.hpp> <fmt/format.h>
  <algorithm> <chrono> <cstdint> <functional> <iostream> <map> <memory> <optional> <set>
  <sstream> <string> <string_view> <vector>)

function(shardctl_reuse_precompiled_headers target)
  target_precompile_headers(${target} REUSE_FROM shardctl_pch)
endfunction()

# Test code compiles at -O0 in the release build (as it does in the asan build): it runs
# assertions, not hot loops, and doctest's expression templates made its -O3 build about a
# third of the release build's CPU time (tests/README.md, "Time"). The library it tests is still
# the -O3 one it links. Another -O level needs a precompiled header of its own, which also
# parses doctest once (GCC 12 crashes, not warns, on a header precompiled at another -O level).
add_library(shardctl_test_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_test_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json doctest::doctest)
target_compile_options(shardctl_test_pch PRIVATE $<$<CONFIG:Release>:-O0>)
target_precompile_headers(shardctl_test_pch PRIVATE
  <doctest/doctest.h> <pqxx/pqxx> <nlohmann/json.hpp> <fmt/format.h>
  <algorithm> <chrono> <cstdint> <functional> <iostream> <map> <memory> <optional> <set>
  <sstream> <string> <string_view> <vector>)

# A test target: -O0 and the test precompiled header (shardctl_core's definitions included).
function(shardctl_test_target target)
  target_link_libraries(${target} PRIVATE shardctl_core)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O0>)
  target_precompile_headers(${target} REUSE_FROM shardctl_test_pch)
endfunction()
