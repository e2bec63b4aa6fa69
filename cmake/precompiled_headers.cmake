# One precompiled header for every C++ target of the project: libpqxx, nlohmann-json and fmt
# are most of what each translation unit parses (a family binary spent two thirds of its 7-9 s
# in the front end), so they are parsed once per build instead of once per unit
# (tests/README.md, "Time"). Targets share it with REUSE_FROM, so they must share its compile
# flags: shardctl_core's definitions (PQXX_HAVE_OPTIONAL changes libpqxx's headers) and the
# global options. shardctl-cli-fuzz compiles at another -O level and keeps its own parse.
add_library(shardctl_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
target_link_libraries(shardctl_pch PUBLIC shardctl_core PkgConfig::PQXX nlohmann_json::nlohmann_json)
target_precompile_headers(shardctl_pch PRIVATE
  <pqxx/pqxx> <nlohmann/json.hpp> <fmt/format.h>
  <algorithm> <chrono> <cstdint> <functional> <iostream> <map> <memory> <optional> <set>
  <sstream> <string> <string_view> <vector>)

function(shardctl_reuse_precompiled_headers target)
  target_precompile_headers(${target} REUSE_FROM shardctl_pch)
endfunction()
