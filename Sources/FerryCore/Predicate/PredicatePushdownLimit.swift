/// Why a comparison is not pushed down to PostgreSQL: ferry evaluates it on the rows instead.
/// Carried as the `underlying` error of the `FerryError` the compiler throws.
package struct PredicatePushdownLimit: Error, Sendable, Hashable {
    package var reason: String
}
