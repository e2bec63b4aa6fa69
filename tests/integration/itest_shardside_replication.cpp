// shardside/replication.hpp against live servers: the foundation of online moves. A key range
// of three tables (a plain one, a partitioned one whose rows cross partitions, a text-keyed one
// under a hash filter) is copied under a new slot's exported snapshot while another session
// inserts, updates (into, out of and within the range) and deletes rows; a subscription on
// that slot then brings the target to exactly the source's rows of the range. Then: every
// object dropped (twice: idempotent) and none left on either side; a subscription dropped
// after its slot is gone and its source unreachable; a slot that cannot be created while a
// transaction holds an id, leaving nothing; a replica identity that does not cover the key,
// refused before anything is created.
//
// The target is a second database on the test's own cluster: a subscription that uses an
// existing slot works within one cluster as across two.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "itest_pg.hpp"
#include "routing/key.hpp"
#include "shardio/key_filter.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/replication.hpp"

using namespace shardctl;
using namespace shardctl::shardside;
using shardio::RawConn;
using Rows = std::vector<std::vector<std::string>>;

namespace {

std::string source_dsn() {
  itest::connect();  // fails the test when SHARDCTL_TEST_DSN is missing or unreachable
  return std::getenv("SHARDCTL_TEST_DSN");
}

// The target database: the source's name + "_t" on the same cluster, made empty for each case
// and dropped when the case passes (a failed case leaves it to be looked at).
struct TargetDatabase {
  std::string name;
  std::string dsn;
  explicit TargetDatabase(RawConn& source) {
    name = source.query("SELECT current_database() || '_t'")[0][0];
    dsn = source_dsn() + " dbname=" + name;  // the last dbname wins
    source.exec("DROP DATABASE IF EXISTS " + source.identifier(name) + " WITH (FORCE)");
    source.exec("CREATE DATABASE " + source.identifier(name));
  }
  void drop(RawConn& source) { source.exec("DROP DATABASE " + source.identifier(name) + " WITH (FORCE)"); }
};

std::string new_op_id(RawConn& c) { return c.query("SELECT gen_random_uuid()::text")[0][0]; }

const char* const schema_ddl =
    "CREATE TABLE items (id bigint PRIMARY KEY, tenant int NOT NULL, payload text NOT NULL); "
    "CREATE TABLE accounts (k text PRIMARY KEY, balance int NOT NULL); "
    "CREATE TABLE events (id bigint NOT NULL, at int NOT NULL, note text NOT NULL, PRIMARY KEY (id)) "
    "PARTITION BY RANGE (id); ";

void make_source(RawConn& src) {
  src.script(std::string(schema_ddl) +
             "CREATE TABLE events_lo PARTITION OF events FOR VALUES FROM (MINVALUE) TO (150); "
             "CREATE TABLE events_hi PARTITION OF events FOR VALUES FROM (150) TO (MAXVALUE); "
             "INSERT INTO items SELECT i, i % 7, 'p' || i FROM generate_series(1, 300) i; "
             "INSERT INTO events SELECT i, i, 'e' || i FROM generate_series(1, 300) i; "
             "INSERT INTO accounts SELECT 'k' || i, i FROM generate_series(1, 300) i");
}

// The target partitions events otherwise: rows arrive through the root.
void make_target(RawConn& tgt) {
  tgt.script(std::string(schema_ddl) + "CREATE TABLE events_all PARTITION OF events DEFAULT");
}

struct MovingRange {
  std::string items, events, accounts;  // each table's row filter
};

// The filters online moves give the publication: what shardio/key_filter writes for a batch.
MovingRange moving_range(RawConn& src) {
  using routing::Key;
  using routing::KeyType;
  using routing::MapKind;
  routing::KeyRange ids{Key{std::int64_t{100}}, Key{std::int64_t{200}}};
  routing::KeyRange upper_hashes{Key{std::int64_t{0}}, std::nullopt};
  shardio::RouteSpace range_map{MapKind::range, KeyType::int8}, hash_map{MapKind::hash, KeyType::text};
  return {shardio::key_filter(src, range_map, "id", ids), shardio::key_filter(src, range_map, "id", ids),
          shardio::key_filter(src, hash_map, "k", upper_hashes)};
}

std::int64_t count(RawConn& c, const std::string& sql) { return std::stoll(c.query(sql)[0][0]); }

std::vector<ReplicationObject> objects(RawConn& c) { return list_replication_objects(c); }

// Waits (up to 10 s) until `ready` holds; false when it never does.
template <typename F>
bool eventually(F&& ready) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("a range copied under the slot's snapshot, then its changes replicated: the target holds exactly the range") {
  RawConn src(source_dsn(), "source"), writer(source_dsn(), "writer"), reader(source_dsn(), "reader");
  TargetDatabase target_db(src);
  RawConn tgt(target_db.dsn, "target");
  make_source(src);
  make_target(tgt);
  auto range = moving_range(src);
  CHECK(range.accounts.find("hashtextextended") != std::string::npos);

  std::vector<MovingTable> moving{{"items", {"id"}}, {"events", {"id"}}, {"accounts", {"k"}}};
  auto source_report = check_source(src, moving);
  for (const auto& u : source_report.unmet) MESSAGE(u.message);
  REQUIRE(source_report.ok());
  REQUIRE(check_target(tgt).ok());

  std::string op = new_op_id(src);
  std::string name = replication_name(op, 7);
  std::vector<PublishedTable> published{{"items", range.items}, {"events", range.events}, {"accounts", range.accounts}};
  CHECK(create_publication(src, name, published));
  CHECK_FALSE(create_publication(src, name, published));  // kept

  auto t0 = std::chrono::steady_clock::now();
  ExportedSlot slot(source_dsn(), "source", name);
  MESSAGE("slot created in "
          << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()
          << " ms");
  CHECK(slot.slot_name() == name);
  CHECK(!slot.snapshot_name().empty());
  CHECK(slot.consistent_point() > 0);

  // After the snapshot, before the copy: into, out of and within the range, and outside it.
  writer.script(
      "UPDATE items SET payload = 'a' || payload WHERE id IN (50, 100, 120, 250); "
      "DELETE FROM items WHERE id IN (110, 260, 130); "
      "UPDATE items SET id = 1150 WHERE id = 150; "  // leaves the range: a delete for the target
      "UPDATE items SET id = 130 WHERE id = 30; "    // enters it: an insert for the target
      "INSERT INTO items VALUES (1001, 1, 'new out'), (0, 1, 'new out'); "
      "DELETE FROM events WHERE id IN (120, 175); "
      "UPDATE events SET id = 175, note = 'crossed' WHERE id = 140; "  // from events_lo to events_hi
      "INSERT INTO events VALUES (5000, 1, 'out'); "
      "UPDATE accounts SET balance = balance + 1000; "
      "DELETE FROM accounts WHERE k IN ('k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8'); "
      "INSERT INTO accounts SELECT 'n' || i, i FROM generate_series(1, 40) i");

  // The copy reads under the snapshot, one table after the other, while writes go on.
  begin_snapshot_transaction(reader, slot.snapshot_name());
  shardio::pump_copy(reader, "COPY (SELECT * FROM items WHERE " + range.items + ") TO STDOUT (FORMAT binary)", tgt,
                     "COPY items FROM STDIN (FORMAT binary)");
  writer.script(
      "UPDATE items SET payload = 'b' || payload WHERE id IN (100, 199, 200); "
      "DELETE FROM items WHERE id = 101; "
      "UPDATE events SET note = 'b' WHERE id BETWEEN 95 AND 105");
  shardio::pump_copy(reader, "COPY (SELECT * FROM events WHERE " + range.events + ") TO STDOUT (FORMAT binary)", tgt,
                     "COPY events FROM STDIN (FORMAT binary)");
  shardio::pump_copy(reader, "COPY (SELECT * FROM accounts WHERE " + range.accounts + ") TO STDOUT (FORMAT binary)",
                     tgt, "COPY accounts FROM STDIN (FORMAT binary)");
  reader.exec("COMMIT");
  slot.close();
  // The copy is the snapshot's: none of the writes above is in it.
  CHECK(tgt.query("SELECT payload FROM items WHERE id = 100")[0][0] == "p100");
  CHECK(count(tgt, "SELECT count(*) FROM items WHERE id IN (101, 110, 150)") == 3);
  CHECK(count(tgt, "SELECT count(*) FROM events WHERE note = 'crossed'") == 0);

  SubscriptionSpec spec{name, source_dsn(), name, name};
  CHECK(create_subscription(tgt, spec));
  CHECK_FALSE(create_subscription(tgt, spec));  // kept
  auto before = subscription_progress(tgt, name);
  CHECK(before.exists);
  CHECK_FALSE(before.enabled);
  CHECK(wait_applied(tgt, name, 1, std::chrono::milliseconds(50)).outcome == WaitOutcome::stopped);
  enable_subscription(tgt, name);

  // While the subscription applies: a transaction of several statements, and more of each kind.
  writer.script(
      "BEGIN; INSERT INTO items VALUES (101, 3, 'back'), (2000, 3, 'out'); "
      "UPDATE items SET tenant = tenant + 10 WHERE id BETWEEN 90 AND 140; "
      "DELETE FROM events WHERE id = 199; COMMIT; "
      "UPDATE accounts SET balance = -balance WHERE k LIKE 'n%'");

  std::uint64_t position = flushed_wal_position(src);
  auto waited = wait_applied(tgt, name, position, std::chrono::seconds(20));
  MESSAGE("applied past " << format_lsn(position) << " after " << waited.waited.count() << " ms");
  REQUIRE_MESSAGE(waited.outcome == WaitOutcome::applied, "outcome " << to_text(waited.outcome) << ", worker "
                                                                     << waited.last.worker_pid.value_or(0)
                                                                     << ", apply errors " << waited.last.apply_errors);
  CHECK(*waited.last.applied >= position);
  CHECK(waited.last.worker_pid.has_value());

  // Exactly the source's rows of the range, nothing outside it, deletes applied.
  auto rows_of = [&](RawConn& c, const std::string& table, const std::string& key, const std::string& filter) {
    return c.query("SELECT * FROM " + table + (filter.empty() ? "" : " WHERE " + filter) + " ORDER BY " + key);
  };
  Rows want_items = rows_of(src, "items", "id", range.items), got_items = rows_of(tgt, "items", "id", "");
  Rows want_events = rows_of(src, "events", "id", range.events), got_events = rows_of(tgt, "events", "id", "");
  Rows want_accounts = rows_of(src, "accounts", "k", range.accounts), got_accounts = rows_of(tgt, "accounts", "k", "");
  CHECK(want_items.size() > 90);
  CHECK(want_accounts.size() > 100);
  CHECK(got_items == want_items);
  CHECK(got_events == want_events);
  CHECK(got_accounts == want_accounts);
  CHECK(tgt.query("SELECT payload FROM items WHERE id = 100")[0][0] == "bap100");
  CHECK(tgt.query("SELECT payload FROM items WHERE id = 101")[0][0] == "back");
  CHECK(count(tgt, "SELECT count(*) FROM items WHERE id IN (110, 150, 1150, 2000)") == 0);
  CHECK(count(tgt, "SELECT count(*) FROM events WHERE id = 175 AND note = 'crossed'") == 1);

  auto lag = replication_lag(src, name, tgt, name);
  CHECK(lag.bytes <= inserted_wal_position(src) - position);

  auto on_source = objects(src), on_target = objects(tgt);
  REQUIRE(on_source.size() == 2);
  CHECK(on_source[0].kind == ReplicationObjectKind::publication);
  CHECK(on_source[1].kind == ReplicationObjectKind::slot);
  CHECK(on_source[1].active_pid.has_value());
  for (const auto& o : on_source) {
    CHECK(o.name == name);
    CHECK(o.owner.op_id == op);
    CHECK(o.owner.batch_no == 7);
  }
  REQUIRE(on_target.size() == 1);
  CHECK(on_target[0].kind == ReplicationObjectKind::subscription);
  CHECK(on_target[0].enabled);

  // Subscription, slot, publication; each drop again finds nothing.
  CHECK(drop_subscription(tgt, name));
  CHECK_FALSE(drop_subscription(tgt, name));
  CHECK(drop_slot(src, name));
  CHECK_FALSE(drop_slot(src, name));
  CHECK(drop_publication(src, name));
  CHECK_FALSE(drop_publication(src, name));
  CHECK(objects(src).empty());
  CHECK(objects(tgt).empty());
  CHECK(count(src, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + name + "'") == 0);
  target_db.drop(src);
}

TEST_CASE("a subscription drops after its slot is gone and with its source unreachable; a slot in use is named") {
  RawConn src(source_dsn(), "source");
  TargetDatabase target_db(src);
  RawConn tgt(target_db.dsn, "target");
  src.exec("CREATE TABLE little (id bigint PRIMARY KEY)");
  tgt.exec("CREATE TABLE little (id bigint PRIMARY KEY)");
  std::string name = replication_name(new_op_id(src), 0);
  create_publication(src, name, {{"little", "id >= 0"}});
  ExportedSlot(source_dsn(), "source", name).close();
  create_subscription(tgt, {name, source_dsn(), name, name});
  enable_subscription(tgt, name);
  auto slot_active = [&] {
    for (const auto& o : objects(src))
      if (o.kind == ReplicationObjectKind::slot && o.active_pid) return true;
    return false;
  };
  REQUIRE(eventually(slot_active));

  try {
    drop_slot(src, name, std::chrono::milliseconds(100));
    FAIL("an active slot was dropped");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::locked);
    CHECK(std::string(e.what()).find("is in use by pid") != std::string::npos);
    CHECK(std::string(e.what()).find("application " + name) != std::string::npos);  // the subscription
  }
  CHECK(objects(src).size() == 2);

  tgt.exec("ALTER SUBSCRIPTION " + name + " DISABLE");
  CHECK(drop_slot(src, name));  // waits for the sender to end
  tgt.exec("ALTER SUBSCRIPTION " + name + " CONNECTION 'host=/nonexistent port=1 dbname=none connect_timeout=1'");
  CHECK(drop_subscription(tgt, name));
  CHECK(objects(tgt).empty());
  CHECK(drop_publication(src, name));
  CHECK(objects(src).empty());
  target_db.drop(src);
}

TEST_CASE("a slot that waits too long for an open transaction is not created, and names the transaction") {
  RawConn src(source_dsn(), "source"), holder(source_dsn(), "holder");
  holder.exec("BEGIN");
  std::string holder_pid = holder.query("SELECT pg_backend_pid()::text, pg_current_xact_id()::text")[0][0];
  std::string name = replication_name(new_op_id(src), 3);
  try {
    ExportedSlot slot(source_dsn(), "source", name, std::chrono::milliseconds(300));
    FAIL("the slot was created while a transaction held an id");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::locked);
    std::string msg = e.what();
    CHECK(msg.find("creating replication slot " + name) != std::string::npos);
    CHECK(msg.find("pid " + holder_pid + " ") != std::string::npos);
  }
  CHECK(eventually(
      [&] { return count(src, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + name + "'") == 0; }));
  holder.exec("ROLLBACK");
  CHECK(objects(src).empty());
}

TEST_CASE("a replica identity that does not cover the key is refused before anything is created") {
  RawConn src(source_dsn(), "source");
  src.script(
      "CREATE TABLE by_tenant (id bigint PRIMARY KEY, tenant int NOT NULL); "
      "CREATE TABLE by_index (id bigint NOT NULL, tenant int NOT NULL); "
      "CREATE UNIQUE INDEX by_index_key ON by_index (tenant, id); "
      "ALTER TABLE by_index REPLICA IDENTITY USING INDEX by_index_key; "
      "CREATE TABLE by_full (tenant int); ALTER TABLE by_full REPLICA IDENTITY FULL; "
      "CREATE TABLE parted (tenant int NOT NULL, PRIMARY KEY (tenant)) PARTITION BY LIST (tenant); "
      "CREATE TABLE parted_1 PARTITION OF parted FOR VALUES IN (1); "
      "CREATE TABLE parted_2 PARTITION OF parted FOR VALUES IN (2)");
  src.exec("ALTER TABLE parted_2 REPLICA IDENTITY DEFAULT");
  auto ok = check_source(
      src, {{"by_index", {"tenant"}}, {"by_full", {"tenant"}}, {"parted", {"tenant"}}, {"by_tenant", {"id"}}});
  for (const auto& u : ok.unmet) MESSAGE(u.message);
  CHECK_FALSE(ok.has(Requirement::replica_identity));

  src.exec("ALTER TABLE parted_2 REPLICA IDENTITY NOTHING");
  auto report = check_source(src, {{"by_tenant", {"tenant"}}, {"parted", {"tenant"}}, {"missing", {"id"}}});
  for (const auto& u : report.unmet) MESSAGE(u.message);
  REQUIRE(report.unmet.size() == 3);
  for (const auto& u : report.unmet) CHECK(u.requirement == Requirement::replica_identity);
  CHECK(report.unmet[0].message ==
        "source: table by_tenant: its replica identity (its primary key by_tenant_pkey) does not include key column "
        "tenant; while an online move publishes the table filtered on that key, UPDATE and DELETE on it fail");
  CHECK(report.unmet[0].hint.find("REPLICA IDENTITY USING INDEX") != std::string::npos);
  CHECK(report.unmet[1].message.find("table parted (partition parted_2): its replica identity (NOTHING)") == 8);
  CHECK(report.unmet[2].message == "source: table missing does not exist");
  try {
    report.require();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("(and 2 more unmet requirements)") != std::string::npos);
  }
  CHECK(objects(src).empty());
}
