# One precompiled header for every C++ target of the project: libpqxx, nlohmann-json and fmt
# are most of what each translation unit parses (a family binary spent two thirds of its 7-9 s
# in the front end), so they are parsed once per build instead of once per unit
# (tests/README.md, "Time"). Targets share it with REUSE_FROM, so they must share its compile
# flags: shardctl_core's definitions (PQXX_HAVE_OPTIONAL changes libpqxx's headers) and the
# global options. Test code and the command-line front end compile at other -O levels and have
# headers of their own (below): GCC 12 crashes, not warns, on a header precompiled at another
# -O level.
set(SHARDCTL_PCH_HEADERS
  <pqxx/pqxx> <nlohmann/json.hpp> <fmt/format.h>
  <algorithm> <chrono> <cstdint> <functional> <iostream> <map> <memory> <optional> <set>
  <sstream> <string> <string_view> <vector>)
add_library(shardctl_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json)
target_precompile_headers(shardctl_pch PRIVATE ${SHARDCTL_PCH_HEADERS})

function(shardctl_reuse_precompiled_headers target)
  target_precompile_headers(${target} REUSE_FROM shardctl_pch)
endfunction()

# Test code compiles at -O0 in the release build (as it does in the asan build): it runs
# assertions, not hot loops, and doctest's expression templates made its -O3 build about a
# third of the release build's CPU time (tests/README.md, "Time"). The library it tests is still
# the -O3 one it links. Its header also parses doctest once.
add_library(shardctl_test_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_test_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json doctest::doctest)
target_compile_options(shardctl_test_pch PRIVATE $<$<CONFIG:Release>:-O0>)
target_precompile_headers(shardctl_test_pch PRIVATE <doctest/doctest.h> ${SHARDCTL_PCH_HEADERS})

# A test target: -O0 and the test precompiled header (shardctl_core's definitions included).
function(shardctl_test_target target)
  target_link_libraries(${target} PRIVATE shardctl_core)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O0>)
  target_precompile_headers(${target} REUSE_FROM shardctl_test_pch)
endfunction()

# The command-line front end (apps/ and lib/cli: parse a command line, call the library, print
# what it returns) compiles at -Og in the release build. It computes nothing a user could time,
# and at -O3 it was about a fifth of the release build's CPU (CLI11's templates above all); -Og
# keeps the data-flow analysis -Wmaybe-uninitialized needs, which -O0 drops (tests/README.md,
# "Time"). The library it calls, where rows are copied and digested, stays -O3.
add_library(shardctl_front_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_front_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json)
target_compile_options(shardctl_front_pch PRIVATE $<$<CONFIG:Release>:-Og>)
target_precompile_headers(shardctl_front_pch PRIVATE ${SHARDCTL_PCH_HEADERS})

# A front-end target: -Og and the front end's precompiled header.
function(shardctl_front_target target)
  target_link_libraries(${target} PRIVATE shardctl_core)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Og>)
  target_precompile_headers(${target} REUSE_FROM shardctl_front_pch)
endfunction()
