// The sample multi-tenant e-commerce data set of the sandbox (shardctl-sandbox(1)).
#pragma once

#include <cstdint>
#include <string>

#include "pg/connection.hpp"

namespace shardctl::sandbox {

// Creates region, product (reference), customers, orders, order_lines (keyed by customer_id)
// on a shard database, and loads the reference rows plus the customers in [first, last]
// with their orders and lines. Deterministic: the same ids always give the same rows.
void load_sample_shard(pg::Connection& shard, std::int64_t first_customer, std::int64_t last_customer);

}  // namespace shardctl::sandbox
