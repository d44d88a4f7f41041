import FerryCore
import FerryPostgres

extension FerryLayout {
    /// ferry's layout in a PostgreSQL schema.
    package static let postgreSQL = FerryLayout(backend: PostgreSQLLayoutBackend())
}

/// ferry's layout in a PostgreSQL schema: PostgreSQL's own types (``PostgresValueCoding``,
/// ``PostgreSQLDialect``), and names of at most 63 bytes.
struct PostgreSQLLayoutBackend: FerryLayoutBackend {
    var engine: StoreEngine { .postgreSQL }
    var valueCoding: any ValueCoding { PostgresValueCoding() }
    var dialect: any SQLDialect { PostgreSQLDialect() }

    /// A name over 63 bytes becomes its start and a hash of all of it
    /// (`PostgresIdentifier.fitted`), since PostgreSQL would cut it and two cut names could clash.
    func fitted(_ name: String) -> String {
        guard PostgresIdentifier.problem(with: name) != nil else { return name }
        return PostgresIdentifier.fitted(name, suffix: "")
    }

    /// The tables and columns of `model` that PostgreSQL cannot name as the model does (over 63
    /// bytes: PostgreSQL would cut them; `PostgresIdentifier.problem`), each an error naming the
    /// entity, attribute or relationship. Index names are made to fit instead (`fitted`).
    func nameProblems(in model: ObjectModel, layout: FerryLayout) -> [FerryError] {
        var problems: [FerryError] = []
        func check(_ name: String, _ what: String, at location: InputLocation?) {
            guard let problem = PostgresIdentifier.problem(with: name) else { return }
            problems.append(
                FerryError(
                    .invalidModel, "a PostgreSQL store cannot hold \(what): \(problem)",
                    at: location ?? model.location,
                    notes: ["nothing was read or changed; shorten the name in the model to at most 63 bytes"]))
        }
        var joinTables: Set<String> = []
        for entity in model.entities {
            check(layout.table(for: entity), "the table of entity '\(entity.name)'", at: entity.location)
            for attribute in entity.attributes where attribute.isStored {
                check(
                    layout.column(forAttribute: attribute.name, in: entity),
                    "the column of attribute '\(entity.name).\(attribute.name)'", at: attribute.location)
            }
            for relationship in entity.relationships {
                switch layout.storage(of: relationship, in: entity, model: model) {
                case .foreignKey(let column):
                    check(
                        column, "the key column of relationship '\(entity.name).\(relationship.name)'",
                        at: relationship.location)
                case .joinTable(let table, _, _):
                    guard joinTables.insert(table).inserted else { continue }
                    check(
                        table, "the join table of relationship '\(entity.name).\(relationship.name)'",
                        at: relationship.location)
                case .inverseForeignKey:
                    continue
                }
            }
        }
        return problems
    }
}
