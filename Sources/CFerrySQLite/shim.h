#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type ferry_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type ferry_sqlite_static(void) { return SQLITE_STATIC; }

/// Turns off SQLite's memory statistics, which take a process-wide mutex around every allocation
/// (sqlite3_memory_used() then reports nothing). Only works before SQLite initializes; returns
/// SQLITE_MISUSE after. sqlite3_config is variadic, which Swift cannot call.
static inline int ferry_sqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

/// Leaves the write-ahead log as it is when the connection closes (no checkpoint, no deletion):
/// for Core Data stores written in place, whose -wal belongs to the app. sqlite3_db_config is
/// variadic, which Swift cannot call.
static inline int ferry_sqlite_keep_wal_on_close(sqlite3 *db) { return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0); }
