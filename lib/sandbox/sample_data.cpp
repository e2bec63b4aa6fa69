#include "sandbox/sample_data.hpp"

namespace shardctl::sandbox {
namespace {

constexpr const char* schema_sql = R"SQL(
CREATE TABLE IF NOT EXISTS public.region (
  region_id integer PRIMARY KEY,
  name      text NOT NULL
);
CREATE TABLE IF NOT EXISTS public.product (
  product_id integer PRIMARY KEY,
  name       text NOT NULL,
  price      numeric(10,2) NOT NULL,
  region_id  integer NOT NULL REFERENCES public.region
);
CREATE TABLE IF NOT EXISTS public.customers (
  customer_id bigint PRIMARY KEY,
  name        text NOT NULL,
  region_id   integer NOT NULL REFERENCES public.region,
  created_at  timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS public.orders (
  customer_id bigint NOT NULL REFERENCES public.customers,
  order_id    integer NOT NULL,
  ordered_at  timestamptz NOT NULL,
  status      text NOT NULL,
  PRIMARY KEY (customer_id, order_id)
);
CREATE TABLE IF NOT EXISTS public.order_lines (
  customer_id bigint NOT NULL,
  order_id    integer NOT NULL,
  line_no     integer NOT NULL,
  product_id  integer NOT NULL REFERENCES public.product,
  quantity    integer NOT NULL,
  amount      numeric(12,2) NOT NULL,
  PRIMARY KEY (customer_id, order_id, line_no),
  FOREIGN KEY (customer_id, order_id) REFERENCES public.orders
);
)SQL";

// Reference rows: identical on every shard.
constexpr const char* reference_sql = R"SQL(
INSERT INTO public.region SELECT g, 'region ' || g FROM generate_series(1, 8) g ON CONFLICT DO NOTHING;
INSERT INTO public.product
SELECT g, 'product ' || g, 1 + ((g * 7919) % 10000) / 100.0, 1 + g % 8
FROM generate_series(1, 200) g ON CONFLICT DO NOTHING;
)SQL";

}  // namespace

void load_sample_shard(pg::Connection& shard, std::int64_t first, std::int64_t last) {
  shard.transact([&](pqxx::work& tx) {
    tx.exec(schema_sql);
    tx.exec(reference_sql);
    if (first > last) return;
    // About 5 orders per customer and 3 lines per order, all derived from the ids.
    tx.exec_params(
        "INSERT INTO public.customers "
        "SELECT c, 'customer ' || c, 1 + c % 8, timestamptz '2024-01-01 00:00+00' + (c % 365) * interval '1 day' "
        "FROM generate_series($1::bigint, $2::bigint) c",
        first, last);
    tx.exec_params(
        "INSERT INTO public.orders "
        "SELECT c, o, timestamptz '2024-01-01 00:00+00' + ((c * 31 + o * 7) % 700) * interval '1 day', "
        "       (ARRAY['new', 'paid', 'shipped', 'delivered'])[1 + (c + o) % 4] "
        "FROM generate_series($1::bigint, $2::bigint) c, generate_series(1, 1 + (c % 9)::int) o",
        first, last);
    tx.exec_params(
        "INSERT INTO public.order_lines "
        "SELECT o.customer_id, o.order_id, l, p, q, q * (1 + ((p * 7919) % 10000) / 100.0) "
        "FROM public.orders o, generate_series(1, 1 + ((o.customer_id + o.order_id) % 5)::int) l, "
        "     LATERAL (SELECT 1 + ((o.customer_id * 13 + o.order_id * 17 + l) % 200)::int AS p, "
        "                     1 + ((o.customer_id + l) % 5)::int AS q) x "
        "WHERE o.customer_id BETWEEN $1 AND $2",
        first, last);
    tx.exec("ANALYZE");
  });
}

}  // namespace shardctl::sandbox
