// libpq, loaded on first use: ferry opens libpq.so.5 with dlopen when it first connects to a
// PostgreSQL store, so a process that never does (every SQLite import or export) does not map
// libpq and its TLS and Kerberos libraries.
//
// The types and constants below are libpq's (libpq-fe.h, part of its stable ABI); each function
// keeps libpq's name and signature and calls through the pointer ferry_pq_load() filled in, so
// Swift calls libpq as before. To call another libpq function: add it to FERRY_PQ_FUNCTIONS (and
// any type or constant it needs, with libpq's values, here).
#ifndef FERRY_POSTGRES_SHIM_H
#define FERRY_POSTGRES_SHIM_H

#include <stddef.h>

typedef unsigned int Oid;
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef struct pg_cancel PGcancel;
typedef void (*PQnoticeProcessor)(void *arg, const char *message);

typedef enum {
    CONNECTION_OK,
    CONNECTION_BAD
} ConnStatusType;

typedef enum {
    PGRES_EMPTY_QUERY = 0,
    PGRES_COMMAND_OK,
    PGRES_TUPLES_OK,
    PGRES_COPY_OUT,
    PGRES_COPY_IN,
    PGRES_BAD_RESPONSE,
    PGRES_NONFATAL_ERROR,
    PGRES_FATAL_ERROR,
    PGRES_COPY_BOTH,
    PGRES_SINGLE_TUPLE
} ExecStatusType;

typedef enum {
    PQTRANS_IDLE,
    PQTRANS_ACTIVE,
    PQTRANS_INTRANS,
    PQTRANS_INERROR,
    PQTRANS_UNKNOWN
} PGTransactionStatusType;

typedef enum {
    PQERRORS_TERSE,
    PQERRORS_DEFAULT,
    PQERRORS_VERBOSE,
    PQERRORS_SQLSTATE
} PGVerbosity;

// X(return type, name, parameters, arguments) for every libpq function ferry calls that returns
// a value, V(name, parameters, arguments) for those that return nothing.
#define FERRY_PQ_FUNCTIONS(X, V) \
    X(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname), (keywords, values, expand_dbname)) \
    V(PQfinish, (PGconn *conn), (conn)) \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn)) \
    X(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn)) \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn)) \
    X(PGVerbosity, PQsetErrorVerbosity, (PGconn *conn, PGVerbosity verbosity), (conn, verbosity)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg)) \
    X(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query)) \
    X(PGresult *, PQexecParams, (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat), (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat)) \
    X(PGresult *, PQprepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes), (conn, stmtName, query, nParams, paramTypes)) \
    X(PGresult *, PQexecPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat), (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat)) \
    X(PGresult *, PQgetResult, (PGconn *conn), (conn)) \
    X(int, PQsendQuery, (PGconn *conn, const char *query), (conn, query)) \
    X(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes), (conn, buffer, nbytes)) \
    X(int, PQputCopyEnd, (PGconn *conn, const char *errormsg), (conn, errormsg)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res)) \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode)) \
    X(int, PQntuples, (const PGresult *res), (res)) \
    X(int, PQnfields, (const PGresult *res), (res)) \
    X(char *, PQfname, (const PGresult *res, int field_num), (res, field_num)) \
    X(Oid, PQftype, (const PGresult *res, int field_num), (res, field_num)) \
    X(char *, PQcmdTuples, (PGresult *res), (res)) \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    V(PQclear, (PGresult *res), (res)) \
    X(int, PQgetCopyData, (PGconn *conn, char **buffer, int async), (conn, buffer, async)) \
    V(PQfreemem, (void *ptr), (ptr)) \
    X(PGcancel *, PQgetCancel, (PGconn *conn), (conn)) \
    X(int, PQcancel, (PGcancel *cancel, char *errbuf, int errbufsize), (cancel, errbuf, errbufsize)) \
    V(PQfreeCancel, (PGcancel *cancel), (cancel))

/// The loaded functions (NULL until ferry_pq_load() succeeds).
struct ferry_pq_functions {
#define FERRY_PQ_POINTER(ret, name, params, args) ret (*name) params;
#define FERRY_PQ_VOID_POINTER(name, params, args) void (*name) params;
    FERRY_PQ_FUNCTIONS(FERRY_PQ_POINTER, FERRY_PQ_VOID_POINTER)
#undef FERRY_PQ_POINTER
#undef FERRY_PQ_VOID_POINTER
};
extern struct ferry_pq_functions ferry_pq;

/// Loads libpq once (thread-safe); 1 when every function was found, else 0 with the reason
/// (dlerror's text) in `error` (`size` bytes, NUL-terminated). Call before any other PQ function.
int ferry_pq_load(char *error, size_t size);

#define FERRY_PQ_WRAPPER(ret, name, params, args) static inline ret name params { return ferry_pq.name args; }
#define FERRY_PQ_VOID_WRAPPER(name, params, args) static inline void name params { ferry_pq.name args; }
FERRY_PQ_FUNCTIONS(FERRY_PQ_WRAPPER, FERRY_PQ_VOID_WRAPPER)
#undef FERRY_PQ_WRAPPER
#undef FERRY_PQ_VOID_WRAPPER

#endif
