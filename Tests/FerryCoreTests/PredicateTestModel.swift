import FerryCore
import FerryTestSupport

/// A small shop model with every kind of relationship storage, its rows, and an in-memory graph
/// over the same rows, for checking compiled SQL against in-memory evaluation.
enum PredicateTestModel {
    static let model = ObjectModel(
        name: "Shop", version: "1",
        entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "email", type: .string),
                    AttributeDescription(name: "age", type: .int32),
                    AttributeDescription(name: "vip", type: .bool),
                    AttributeDescription(name: "balance", type: .decimal),
                    AttributeDescription(name: "joined", type: .date),
                    AttributeDescription(name: "id", type: .uuid),
                    AttributeDescription(name: "score", type: .double),
                    AttributeDescription(name: "avatar", type: .binary),
                ],
                relationships: [
                    RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer"),
                    RelationshipDescription(name: "profile", destination: "Profile", inverse: "customer"),
                ]),
            EntityDescription(
                name: "Profile",
                attributes: [
                    AttributeDescription(name: "bio", type: .string)
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "profile")
                ]),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "number", type: .int64),
                    AttributeDescription(name: "total", type: .decimal),
                    AttributeDescription(name: "placed", type: .date),
                    AttributeDescription(name: "status", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
                    RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "order"),
                    RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, inverse: "orders"),
                ]),
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "sku", type: .string),
                    AttributeDescription(name: "quantity", type: .int16),
                    AttributeDescription(name: "price", type: .double),
                ],
                relationships: [
                    RelationshipDescription(name: "order", destination: "Order", inverse: "items")
                ]),
            EntityDescription(
                name: "Tag",
                attributes: [
                    AttributeDescription(name: "name", type: .string)
                ],
                relationships: [
                    RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "tags")
                ]),
        ])

    static func entity(_ name: String) -> EntityDescription {
        model.entities.first { $0.name == name } ?? EntityDescription(name: name)
    }

    static func date(_ text: String) -> Value { DateCoding.parseISO8601(text).map(Value.date) ?? .null }

    /// Rows by entity: primary key → attribute values and to-one keys.
    static let rows: [String: [Int64: [String: Value]]] = [
        "Customer": [
            1: [
                "name": .string("Ann"), "email": .string("ann@example.com"), "age": .integer(34), "vip": .bool(true),
                "balance": .decimal("120.5"), "joined": date("2023-05-01T10:00:00Z"),
                "id": .uuid("6f1c2d3e-0000-4000-8000-000000000001"), "score": .double(4.5),
                "avatar": .binary([1, 2, 3]), "profile": .integer(1),
            ],
            2: [
                "name": .string("Résumé"), "email": .string("resume@example.com"), "age": .integer(19),
                "vip": .bool(false),
                "balance": .decimal("-3.25"), "joined": date("2024-01-15T00:00:00Z"),
                "id": .uuid("6f1c2d3e-0000-4000-8000-000000000002"), "score": .double(3), "avatar": .null,
                "profile": .null,
            ],
            3: [
                "name": .string("straße"), "email": .string("strasse@example.de"), "age": .integer(52),
                "vip": .bool(true),
                "balance": .decimal("1000"), "joined": date("2021-12-31T23:59:59.999Z"),
                "id": .uuid("6f1c2d3e-0000-4000-8000-000000000003"), "score": .null, "avatar": .null,
                "profile": .integer(2),
            ],
            4: [
                "name": .null, "email": .null, "age": .null, "vip": .null, "balance": .null, "joined": .null,
                "id": .null,
                "score": .null, "avatar": .null, "profile": .null,
            ],
            5: [
                "name": .string("ZOË"), "email": .string("zoe@example.com"), "age": .integer(27), "vip": .bool(false),
                "balance": .decimal("0.1"), "joined": date("2024-06-30T12:00:00Z"),
                "id": .uuid("6f1c2d3e-0000-4000-8000-000000000005"), "score": .double(-1.5), "avatar": .binary([9]),
                "profile": .null,
            ],
        ],
        "Profile": [
            1: ["bio": .string("Loves coffee")],
            2: ["bio": .null],
        ],
        "Order": [
            10: [
                "number": .integer(1001), "total": .decimal("99.99"), "placed": date("2024-02-01T09:00:00Z"),
                "status": .string("paid"), "customer": .integer(1),
            ],
            11: [
                "number": .integer(1002), "total": .decimal("250"), "placed": date("2024-03-05T18:30:00Z"),
                "status": .string("shipped"), "customer": .integer(1),
            ],
            12: [
                "number": .integer(1003), "total": .decimal("12.5"), "placed": date("2023-11-11T11:11:11Z"),
                "status": .string("cancelled"), "customer": .integer(2),
            ],
            13: ["number": .integer(1004), "total": .null, "placed": .null, "status": .null, "customer": .null],
            14: [
                "number": .integer(1005), "total": .decimal("5"), "placed": date("2024-07-01T00:00:00Z"),
                "status": .string("Paid"), "customer": .integer(3),
            ],
        ],
        "Item": [
            100: ["sku": .string("AB-1"), "quantity": .integer(1), "price": .double(9.99), "order": .integer(10)],
            101: ["sku": .string("ab-2"), "quantity": .integer(3), "price": .double(30), "order": .integer(10)],
            102: ["sku": .string("CD-1"), "quantity": .integer(5), "price": .double(50), "order": .integer(11)],
            103: ["sku": .null, "quantity": .null, "price": .null, "order": .integer(12)],
            104: ["sku": .string("XY-9"), "quantity": .integer(2), "price": .double(2.5), "order": .integer(14)],
            105: ["sku": .string("orphan"), "quantity": .integer(7), "price": .double(1), "order": .null],
        ],
        "Tag": [
            200: ["name": .string("gift")],
            201: ["name": .string("rush")],
            202: ["name": .string("Café")],
        ],
    ]

    /// Order–Tag pairs.
    static let orderTags: [(order: Int64, tag: Int64)] = [(10, 200), (10, 201), (11, 201), (14, 202)]

    // MARK: - SQLite store

    static func storageValue(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .double(let double): return .real(double)
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .date(let millis): return .text(DateCoding.format(millis))
        case .binary(let bytes): return .blob(bytes)
        case .decimal(let text), .string(let text), .uuid(let text), .uri(let text), .json(let text): return .text(text)
        }
    }

    /// Creates the store file with every row.
    static func makeStore(at path: String) throws -> Connection {
        let connection = try Connection(path: path)
        try PredicateFunctions.register(on: connection)
        for entity in model.entities {
            var columns = ["\(FerryLayout.primaryKey) INTEGER PRIMARY KEY"]
            columns += entity.attributes.map {
                "\(SQL.quote($0.name)) \(SQLiteDialect().columnType(for: $0.type, storedAs: FerryValueCoding().storageClass(for: $0.type)))"
            }
            for relationship in entity.relationships
            where FerryLayout().ownsForeignKey(relationship, in: entity, model: model) {
                columns.append("\(SQL.quote(relationship.name)) INTEGER")
            }
            try connection.execute("CREATE TABLE \(SQL.quote(entity.name)) (\(columns.joined(separator: ", ")))")
            for (pk, values) in rows[entity.name] ?? [:] {
                var names = [FerryLayout.primaryKey]
                var arguments: [DatabaseValue] = [.integer(pk)]
                for attribute in entity.attributes {
                    names.append(SQL.quote(attribute.name))
                    arguments.append(storageValue(values[attribute.name] ?? .null))
                }
                for relationship in entity.relationships
                where FerryLayout().ownsForeignKey(relationship, in: entity, model: model) {
                    names.append(SQL.quote(relationship.name))
                    arguments.append(storageValue(values[relationship.name] ?? .null))
                }
                let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
                try connection.execute(
                    "INSERT INTO \(SQL.quote(entity.name)) (\(names.joined(separator: ", "))) VALUES (\(marks))",
                    arguments)
            }
        }
        let order = entity("Order")
        guard let tags = order.relationship(named: "tags"),
            case .joinTable(let table, let source, let target) = FerryLayout().storage(
                of: tags, in: order, model: model)
        else { throw FerryError(.internal, "Order.tags is not a join table") }
        try connection.execute(
            "CREATE TABLE \(SQL.quote(table)) (\(SQL.quote(source)) INTEGER, \(SQL.quote(target)) INTEGER)")
        for pair in orderTags {
            try connection.execute(
                "INSERT INTO \(SQL.quote(table)) VALUES (?, ?)", [.integer(pair.order), .integer(pair.tag)])
        }
        return connection
    }

    /// Primary keys of `entity` matching `predicate` through SQL.
    static func sqlMatches(_ predicate: Predicate, entity name: String, connection: Connection) throws -> Set<Int64> {
        let compiled = try predicate.sql(for: entity(name), model: model, layout: FerryLayout())
        let rows = try connection.rows(
            "SELECT t0.ferry_pk FROM \(compiled.from) WHERE \(compiled.sql)", compiled.arguments)
        return Set(rows.compactMap { $0.first?.int64 })
    }

    /// Primary keys of `entity` matching `predicate` in memory.
    static func memoryMatches(_ predicate: Predicate, entity name: String) throws -> Set<Int64> {
        let bound = try predicate.bound(to: entity(name), model: model)
        var matches: Set<Int64> = []
        for pk in (rows[name] ?? [:]).keys where try bound.evaluate(on: GraphObject(entity: name, pk: pk)) {
            matches.insert(pk)
        }
        return matches
    }
}

/// An object of the in-memory graph over ``PredicateTestModel/rows``.
struct GraphObject: PredicateEvaluable {
    let entity: String
    let pk: Int64

    func predicateValue(forKey key: String) -> PredicateValue {
        let model = PredicateTestModel.model
        let description = PredicateTestModel.entity(entity)
        let values = PredicateTestModel.rows[entity]?[pk] ?? [:]
        guard let relationship = description.relationship(named: key) else { return .value(values[key] ?? .null) }
        let destination = relationship.destination
        let destinationRows = PredicateTestModel.rows[destination] ?? [:]
        switch FerryLayout().storage(of: relationship, in: description, model: model) {
        case .foreignKey(let column):
            guard case .integer(let target) = values[column] ?? .null else { return .object(nil) }
            return .object(GraphObject(entity: destination, pk: target))
        case .inverseForeignKey(_, let column):
            let keys = destinationRows.filter { $0.value[column] == .integer(pk) }.keys.sorted()
            let objects = keys.map { GraphObject(entity: destination, pk: $0) }
            return relationship.isToMany ? .objects(objects) : .object(objects.first)
        case .joinTable:
            let pairs = PredicateTestModel.orderTags
            let keys =
                entity == "Order"
                ? pairs.filter { $0.order == pk }.map(\.tag) : pairs.filter { $0.tag == pk }.map(\.order)
            return .objects(keys.map { GraphObject(entity: destination, pk: $0) })
        }
    }
}
