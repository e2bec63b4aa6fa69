#include "shardside/replication_cleanup.hpp"

#include "shardside/stream_keys.hpp"

namespace shardctl::shardside {

namespace {

std::string quoted(const std::string& text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote) out += quote;
    out += c;
  }
  return out + quote;
}

}  // namespace

int drop_order(ReplicationObjectKind kind) noexcept {
  switch (kind) {
    case ReplicationObjectKind::subscription: return 0;
    case ReplicationObjectKind::slot: return 1;
    case ReplicationObjectKind::publication: return 2;
    case ReplicationObjectKind::stream_watch: return 3;
  }
  return 3;
}

bool drop_replication_object(shardio::RawConn& db, const ReplicationObject& object) {
  switch (object.kind) {
    case ReplicationObjectKind::subscription: return drop_subscription(db, object.name);
    case ReplicationObjectKind::slot: return drop_slot(db, object.name);
    case ReplicationObjectKind::publication: return drop_publication(db, object.name);
    case ReplicationObjectKind::stream_watch: return drop_stream_watch(db, object.name);
  }
  return false;
}

std::string drop_statement(const ReplicationObject& object) {
  switch (object.kind) {
    case ReplicationObjectKind::subscription: {
      // As drop_subscription: never reach the source, whose slot is dropped on its own.
      auto name = quoted(object.name, '"');
      return "ALTER SUBSCRIPTION " + name + " DISABLE; ALTER SUBSCRIPTION " + name +
             " SET (slot_name = NONE); DROP SUBSCRIPTION " + name + ";";
    }
    case ReplicationObjectKind::slot: return "SELECT pg_drop_replication_slot(" + quoted(object.name, '\'') + ");";
    case ReplicationObjectKind::publication: return "DROP PUBLICATION " + quoted(object.name, '"') + ";";
    case ReplicationObjectKind::stream_watch: {
      // As drop_stream_watch(): the tables' triggers record nothing without a watch.
      auto name = quoted(object.name, '\'');
      return "DELETE FROM shardctl.stream_watch WHERE stream = " + name +
             "; DELETE FROM shardctl.stream_keys WHERE stream = " + name + ";";
    }
  }
  return "";
}

}  // namespace shardctl::shardside
