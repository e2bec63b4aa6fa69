// The words of a split's moving side (Step::move_upper), a bool: the planner's enums have their
// tables in planner.hpp.
#include "core/words.hpp"
#include "planner/planner.hpp"

namespace shardctl::planner {
namespace {

constexpr auto moving_side_words = words<bool>({{true, "upper"}, {false, "lower"}});

}  // namespace

std::string_view moving_side_name(bool move_upper) noexcept { return moving_side_words.text(move_upper); }
std::optional<bool> moving_side_named(std::string_view name) { return moving_side_words.find(name); }

}  // namespace shardctl::planner
