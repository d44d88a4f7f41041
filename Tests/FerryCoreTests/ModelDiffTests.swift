import FerryCore
import FerryTestSupport
import Testing

/// Models built in code: version 1 is `base`, version 2 is `base` edited by the test.
enum DiffModels {
    /// Customer (id, name, email, age int16, tier optional string) ↔ Order (number, total).
    static func base(version: String = "1") -> ObjectModel {
        ObjectModel(
            name: "Shop", version: version,
            entities: [
                EntityDescription(
                    name: "Customer",
                    attributes: [
                        AttributeDescription(name: "id", type: .int64, isOptional: false),
                        AttributeDescription(name: "name", type: .string, isOptional: false),
                        AttributeDescription(name: "email", type: .string, validation: ValidationRules(maxLength: 100)),
                        AttributeDescription(name: "age", type: .int16),
                        AttributeDescription(name: "tier", type: .string),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "orders", destination: "Order", isToMany: true, inverse: "customer")
                    ],
                    uniquenessConstraints: [["id"]],
                    indexes: [IndexDescription(attributes: ["name"])]),
                EntityDescription(
                    name: "Order",
                    attributes: [
                        AttributeDescription(name: "number", type: .string, isOptional: false),
                        AttributeDescription(name: "total", type: .decimal),
                    ],
                    relationships: [
                        RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders")
                    ]),
            ])
    }

    static func edited(
        version: String = "2", from model: ObjectModel = base(), _ edit: (inout ObjectModel) -> Void
    ) -> ObjectModel {
        var copy = model
        copy.version = version
        edit(&copy)
        return copy
    }

    /// Edits entity `name` in place.
    static func entity(_ model: inout ObjectModel, _ name: String, _ edit: (inout EntityDescription) -> Void) {
        guard let index = model.entities.firstIndex(where: { $0.name == name }) else { return }
        edit(&model.entities[index])
    }

    static func attribute(
        _ model: inout ObjectModel, _ entityName: String, _ name: String, _ edit: (inout AttributeDescription) -> Void
    ) {
        entity(&model, entityName) { entity in
            guard let index = entity.attributes.firstIndex(where: { $0.name == name }) else { return }
            edit(&entity.attributes[index])
        }
    }

    static func relationship(
        _ model: inout ObjectModel, _ entityName: String, _ name: String,
        _ edit: (inout RelationshipDescription) -> Void
    ) {
        entity(&model, entityName) { entity in
            guard let index = entity.relationships.firstIndex(where: { $0.name == name }) else { return }
            edit(&entity.relationships[index])
        }
    }
}

/// The one change of a diff that has exactly one.
private func onlyChange(_ diff: ModelDiff, sourceLocation: SourceLocation = #_sourceLocation) throws -> ModelChange {
    #expect(diff.changes.count == 1, "changes: \(diff.changes)", sourceLocation: sourceLocation)
    return try #require(diff.changes.first, sourceLocation: sourceLocation)
}

@Suite("Model diff: inferred changes")
struct ModelDiffInferenceTests {
    @Test("identical versions have no changes, and the mapping copies everything")
    func identical() throws {
        let diff = ModelDiff(from: DiffModels.base(), to: DiffModels.base(version: "2"))
        #expect(diff.isEmpty)
        #expect(diff.isInferable)
        let mapping = try diff.inferredMapping()
        #expect(mapping.entities.map(\.destination) == ["Customer", "Order"])
        #expect(mapping.entities.map(\.source) == ["Customer", "Order"])
        #expect(
            mapping.entity(named: "Customer")?.attribute(named: "age")
                == InferredMapping.AttributeMapping(destination: "age", source: "age"))
        #expect(
            mapping.entity(named: "Order")?.relationship(named: "customer")
                == InferredMapping.RelationshipMapping(destination: "customer", source: "customer"))
        #expect(mapping.droppedEntities.isEmpty)
        #expect(mapping.sourceHash == DiffModels.base().versionHash)
    }

    @Test("adding an entity: it starts empty")
    func entityAdded() throws {
        let v2 = DiffModels.edited {
            $0.entities.append(
                EntityDescription(
                    name: "Coupon", attributes: [AttributeDescription(name: "code", type: .string, isOptional: false)]))
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            try onlyChange(diff) == ModelChange(kind: .entityAdded, entity: "Coupon", detail: "added (starts empty)"))
        let coupon = try #require(try diff.inferredMapping().entity(named: "Coupon"))
        #expect(coupon.source == nil)
        #expect(coupon.attributes == [InferredMapping.AttributeMapping(destination: "code", source: nil)])
    }

    @Test("removing an entity drops its records")
    func entityRemoved() throws {
        let v2 = DiffModels.edited { model in
            model.entities.removeAll { $0.name == "Order" }
            DiffModels.entity(&model, "Customer") { $0.relationships = [] }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(diff.changes.map(\.kind) == [.relationshipRemoved, .entityRemoved])
        #expect(diff.changes.last?.detail == "removed (its records are dropped)")
        #expect(try diff.inferredMapping().droppedEntities == ["Order"])
        #expect(try diff.inferredMapping().entity(named: "Customer")?.droppedProperties == ["orders"])
    }

    @Test("renaming an entity through renamed_from, relationships following it")
    func entityRenamed() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.entity(&model, "Order") {
                $0.name = "Purchase"
                $0.renamedFrom = "Order"
            }
            DiffModels.relationship(&model, "Customer", "orders") { $0.destination = "Purchase" }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            try onlyChange(diff) == ModelChange(kind: .entityRenamed, entity: "Purchase", detail: "renamed from Order"))
        #expect(try diff.inferredMapping().entity(named: "Purchase")?.source == "Order")
    }

    @Test("adding an optional attribute: stored records get nil")
    func optionalAttributeAdded() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Customer") {
                $0.attributes.append(AttributeDescription(name: "phone", type: .string))
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            try onlyChange(diff)
                == ModelChange(
                    kind: .attributeAdded, entity: "Customer", property: "phone", detail: "added (string, optional)"))
        let phone = try #require(try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "phone"))
        #expect(phone == InferredMapping.AttributeMapping(destination: "phone", source: nil, valueIfNil: .null))
        #expect(phone.value(from: .null) == .null)
    }

    @Test("adding a non-optional attribute with a default: stored records get the default")
    func defaultedAttributeAdded() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Customer") {
                $0.attributes.append(
                    AttributeDescription(name: "level", type: .int16, isOptional: false, defaultValue: .integer(1)))
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(try onlyChange(diff).detail == "added (int16, non-optional, default 1)")
        #expect(diff.isInferable)
        let level = try #require(try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "level"))
        #expect(level.value(from: .null) == .integer(1))
    }

    @Test("removing an attribute drops its values")
    func attributeRemoved() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Customer") { $0.attributes.removeAll { $0.name == "tier" } }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            try onlyChange(diff)
                == ModelChange(
                    kind: .attributeRemoved, entity: "Customer", property: "tier",
                    detail: "removed (string; its values are dropped)"))
        #expect(try diff.inferredMapping().entity(named: "Customer")?.droppedProperties == ["tier"])
    }

    @Test("renaming an attribute through renamed_from carries its values, and its index and constraint follow")
    func attributeRenamed() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.attribute(&model, "Customer", "name") {
                $0.name = "fullName"
                $0.renamedFrom = "name"
            }
            DiffModels.entity(&model, "Customer") { $0.indexes = [IndexDescription(attributes: ["fullName"])] }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            try onlyChange(diff)
                == ModelChange(
                    kind: .attributeRenamed, entity: "Customer", property: "fullName", detail: "renamed from name"))
        #expect(try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "fullName")?.source == "name")
    }

    @Test("a removed and an added attribute of the same type get a renamed_from hint")
    func renameHint() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "tier") { $0.name = "tierName" } }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(diff.isInferable)
        #expect(
            diff.changes.first?.warning
                == "if it is tier renamed, add `renamed_from: tier` to Customer.tierName, or the values of tier are dropped"
        )
    }

    @Test("optional → non-optional with a default: nil values become the default")
    func optionalToRequiredWithDefault() throws {
        let v2 = DiffModels.edited {
            DiffModels.attribute(&$0, "Customer", "tier") {
                $0.isOptional = false
                $0.defaultValue = .string("basic")
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.changes.map(\.detail) == [
                "optional → non-optional (nil values become the default \"basic\")",
                "default none → \"basic\" (stored values are kept)",
            ])
        #expect(diff.isInferable)
        let tier = try #require(try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "tier"))
        #expect(tier.value(from: .null) == .string("basic"))
        #expect(tier.value(from: .string("gold")) == .string("gold"))
    }

    @Test("non-optional → optional")
    func requiredToOptional() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "name") { $0.isOptional = true } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(
            change
                == ModelChange(
                    kind: .attributeOptionalityChanged, entity: "Customer", property: "name",
                    detail: "non-optional → optional"))
    }

    @Test(
        "lossless widenings are inferred, with the conversion in the mapping",
        arguments: [
            (AttributeType.int16, AttributeType.int32, Value.integer(-7), Value.integer(-7)),
            (.int16, .int64, .integer(300), .integer(300)),
            (.int16, .double, .integer(3), .double(3)),
            (.int16, .decimal, .integer(-12), .decimal("-12")),
            (.int16, .string, .integer(42), .string("42")),
        ])
    func widening(from: AttributeType, to: AttributeType, value: Value, converted: Value) throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "age") { $0.type = to } }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(try onlyChange(diff).detail == "type \(from.rawValue) → \(to.rawValue) (lossless widening)")
        let age = try #require(try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "age"))
        #expect(age.conversion == TypeConversion(from: from, to: to))
        #expect(age.value(from: value) == converted)
        #expect(age.value(from: .null) == .null)
    }

    @Test("the widening table")
    func wideningTable() {
        #expect(TypeConversion.isLosslessWidening(from: .int32, to: .int64))
        #expect(TypeConversion.isLosslessWidening(from: .float, to: .double))
        #expect(TypeConversion.isLosslessWidening(from: .uuid, to: .string))
        #expect(TypeConversion(from: .decimal, to: .string)?.apply(to: .decimal("1.5")) == .string("1.5"))
        #expect(!TypeConversion.isLosslessWidening(from: .int64, to: .double))
        #expect(!TypeConversion.isLosslessWidening(from: .int64, to: .int32))
        #expect(!TypeConversion.isLosslessWidening(from: .double, to: .decimal))
        #expect(!TypeConversion.isLosslessWidening(from: .string, to: .int64))
        #expect(!TypeConversion.isLosslessWidening(from: .date, to: .string))
        #expect(!TypeConversion.isLosslessWidening(from: .string, to: .string))
    }

    @Test("a changed default keeps stored values")
    func defaultChanged() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Order", "total") { $0.defaultValue = .decimal("0") } }
        #expect(
            try onlyChange(ModelDiff(from: DiffModels.base(), to: v2)).detail
                == "default none → 0 (stored values are kept)")
    }

    @Test("looser validation is inferred silently; stricter validation warns")
    func validationChanged() throws {
        let looser = DiffModels.edited {
            DiffModels.attribute(&$0, "Customer", "email") { $0.validation.maxLength = 200 }
        }
        let loose = try onlyChange(ModelDiff(from: DiffModels.base(), to: looser))
        #expect(loose.detail == "validation max_length 100 → 200")
        #expect(loose.warning == nil)
        let stricter = DiffModels.edited {
            DiffModels.attribute(&$0, "Customer", "email") { $0.validation.pattern = "[^@]+@[^@]+" }
        }
        let strict = try onlyChange(ModelDiff(from: DiffModels.base(), to: stricter))
        #expect(strict.detail == "validation pattern none → '[^@]+@[^@]+'")
        #expect(strict.warning == "stricter: the migration fails if a stored Customer.email value breaks the new rule")
        #expect(strict.isInferable)
    }

    @Test("hash modifiers change the hash only")
    func hashModifier() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "age") { $0.hashModifier = "years" } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.kind == .attributeHashModifierChanged)
        #expect(change.detail == "hash modifier none → years (changes the version hash only)")
        #expect(change.isInferable)
    }

    @Test("adding, removing and renaming relationships")
    func relationships() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.relationship(&model, "Customer", "orders") {
                $0.name = "purchases"
                $0.renamedFrom = "orders"
            }
            DiffModels.relationship(&model, "Order", "customer") { $0.inverse = "purchases" }
            DiffModels.entity(&model, "Customer") {
                $0.relationships.append(RelationshipDescription(name: "referrer", destination: "Customer"))
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.changes == [
                ModelChange(
                    kind: .relationshipRenamed, entity: "Customer", property: "purchases", detail: "renamed from orders"
                ),
                ModelChange(
                    kind: .relationshipAdded, entity: "Customer", property: "referrer",
                    detail: "added (to-one Customer, optional, starts empty)"),
            ])
        let customer = try #require(try diff.inferredMapping().entity(named: "Customer"))
        #expect(
            customer.relationships == [
                InferredMapping.RelationshipMapping(destination: "purchases", source: "orders"),
                InferredMapping.RelationshipMapping(destination: "referrer", source: nil),
            ])
        let removed = DiffModels.edited { model in
            DiffModels.entity(&model, "Customer") { $0.relationships = [] }
            DiffModels.relationship(&model, "Order", "customer") { $0.inverse = nil }
        }
        #expect(
            ModelDiff(from: DiffModels.base(), to: removed).changes.map(\.detail) == [
                "removed (its links are dropped)", "inverse orders → none (links are carried over from Order.customer)",
            ])
    }

    @Test("to-one → to-many: each link becomes a one-element set")
    func toOneToMany() throws {
        let v2 = DiffModels.edited { DiffModels.relationship(&$0, "Order", "customer") { $0.isToMany = true } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(
            change
                == ModelChange(
                    kind: .relationshipCardinalityChanged, entity: "Order", property: "customer",
                    detail: "to-one → to-many (each link becomes a one-element set)"))
    }

    @Test("delete rules and counts")
    func deleteRuleAndCounts() throws {
        let v2 = DiffModels.edited {
            DiffModels.relationship(&$0, "Customer", "orders") {
                $0.deleteRule = .cascade
                $0.maxCount = 10
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(diff.changes.map(\.detail) == ["delete rule nullify → cascade", "max_count none → 10"])
        #expect(
            diff.changes.last?.warning
                == "stricter: the migration fails if a stored Customer has a number of orders outside the new bounds")
        #expect(diff.isInferable)
    }

    @Test("a new uniqueness constraint is inferred but may fail on duplicates; indexes come and go")
    func constraintsAndIndexes() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Customer") {
                $0.uniquenessConstraints = [["email"]]
                $0.indexes = [IndexDescription(name: "by_age", attributes: ["age"])]
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.changes == [
                ModelChange(
                    kind: .uniquenessConstraintRemoved, entity: "Customer", detail: "uniqueness constraint (id) removed"
                ),
                ModelChange(
                    kind: .uniquenessConstraintAdded, entity: "Customer", detail: "uniqueness constraint (email) added",
                    warning:
                        "the migration fails if stored Customer records share a value of (email); remove duplicates first"
                ),
                ModelChange(kind: .indexRemoved, entity: "Customer", detail: "index (name) removed"),
                ModelChange(kind: .indexAdded, entity: "Customer", detail: "index by_age (age) added"),
            ])
        #expect(diff.isInferable)
    }

    @Test("a renamed_from left over from an older version is ignored when the name exists")
    func staleRenamedFrom() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "name") { $0.renamedFrom = "fullName" } }
        #expect(ModelDiff(from: DiffModels.base(), to: v2).isEmpty)
    }
}

@Suite("Model diff: refusals")
struct ModelDiffRefusalTests {
    @Test("a new non-optional attribute without a default")
    func requiredWithoutDefault() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Customer") {
                $0.attributes.append(AttributeDescription(name: "level", type: .int16, isOptional: false))
            }
        }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.verdict == .refused)
        #expect(
            change.reason
                == "new non-optional attribute Customer.level has no default value; stored Customer records would have none"
        )
        #expect(change.fix == "add `default:` to Customer.level in version 2, or make it optional")
    }

    @Test("a new non-optional attribute beside a removed one suggests renamed_from")
    func requiredWithoutDefaultSuggestsRename() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "name") { $0.name = "fullName" } }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.refusals.map(\.fix) == [
                "add `default:` to Customer.fullName in version 2, or make it optional, or add `renamed_from: name` if it is name renamed"
            ])
    }

    @Test("optional → non-optional without a default")
    func optionalToRequired() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "tier") { $0.isOptional = false } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.verdict == .refused)
        #expect(
            change.reason
                == "Customer.tier becomes non-optional without a default value; stored Customer records with no tier could not be migrated"
        )
        #expect(
            change.fix
                == "add `default:` to Customer.tier in version 2, keep it optional, or write mappings/1-to-2.yml that fills it"
        )
    }

    @Test("a type change that is not a lossless widening")
    func typeChange() throws {
        let v2 = DiffModels.edited { DiffModels.attribute(&$0, "Customer", "tier") { $0.type = .int16 } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.detail == "type string → int16")
        #expect(
            change.reason
                == "Customer.tier changes type from string to int16; lightweight migration converts only lossless widenings"
        )
        #expect(
            change.fix == "write mappings/1-to-2.yml with an expression that converts Customer.tier, or keep it string")
    }

    @Test("to-many → to-one")
    func toManyToOne() throws {
        let v2 = DiffModels.edited { DiffModels.relationship(&$0, "Customer", "orders") { $0.isToMany = false } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(
            change.reason
                == "Customer.orders becomes to-one; a stored Customer linked to several Order records would have to lose all but one"
        )
        #expect(change.fix == "keep it to-many, or write mappings/1-to-2.yml that chooses the Order to keep")
    }

    @Test("a relationship pointing at another entity")
    func destinationChanged() throws {
        let v2 = DiffModels.edited { model in
            model.entities.append(
                EntityDescription(
                    name: "Account",
                    relationships: [
                        RelationshipDescription(
                            name: "orders", destination: "Order", isToMany: true, inverse: "customer")
                    ]))
            DiffModels.relationship(&model, "Order", "customer") { $0.destination = "Account" }
            DiffModels.entity(&model, "Customer") { $0.relationships = [] }
        }
        let refusals = ModelDiff(from: DiffModels.base(), to: v2).refusals
        #expect(refusals.map(\.reason) == ["Order.customer now points at Account instead of Customer"])
        #expect(refusals.map(\.fix) == ["write mappings/1-to-2.yml that links Order.customer to Account"])
    }

    @Test("a new non-optional relationship")
    func requiredRelationshipAdded() throws {
        let v2 = DiffModels.edited {
            DiffModels.entity(&$0, "Order") {
                $0.relationships.append(
                    RelationshipDescription(name: "referrer", destination: "Customer", isOptional: false))
            }
        }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.reason == "new non-optional relationship Order.referrer has no value for stored Order records")
        #expect(change.fix == "make Order.referrer optional in version 2, or write mappings/1-to-2.yml that sets it")
    }

    @Test("a relationship becoming non-optional")
    func relationshipBecomesRequired() throws {
        let v2 = DiffModels.edited { DiffModels.relationship(&$0, "Order", "customer") { $0.isOptional = false } }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(
            change.reason
                == "Order.customer becomes non-optional; stored Order records without one could not be migrated")
        #expect(change.fix == "keep it optional, or write mappings/1-to-2.yml that sets it")
    }

    @Test("an attribute becoming a relationship of the same name")
    func kindChange() throws {
        let v2 = DiffModels.edited { model in
            model.entities.append(
                EntityDescription(name: "Tier", attributes: [AttributeDescription(name: "name", type: .string)]))
            DiffModels.entity(&model, "Customer") {
                $0.attributes.removeAll { $0.name == "tier" }
                $0.relationships.append(RelationshipDescription(name: "tier", destination: "Tier"))
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(diff.changes.map(\.kind) == [.propertyKindChanged, .entityAdded])
        #expect(diff.refusals.map(\.reason) == ["Customer.tier changes from an attribute to a relationship"])
        #expect(
            diff.refusals.map(\.fix) == ["write mappings/1-to-2.yml that fills Customer.tier from the old attribute"])
    }

    @Test("renamed_from naming nothing in the previous version")
    func missingRename() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.attribute(&model, "Customer", "name") {
                $0.name = "fullName"
                $0.renamedFrom = "nmae"
            }
            DiffModels.entity(&model, "Order") {
                $0.name = "Purchase"
                $0.renamedFrom = "Ordre"
            }
            DiffModels.relationship(&model, "Customer", "orders") { $0.destination = "Purchase" }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.refusals.map(\.reason) == [
                "`renamed_from: Ordre` on entity Purchase names no entity of version 1",
                "`renamed_from: nmae` on Customer.fullName names no attribute of Customer in version 1",
            ])
        #expect(
            diff.refusals.map(\.fix) == [
                "correct it (did you mean 'Order'?) or remove it to add entity Purchase as a new entity",
                "correct it (did you mean 'name'?) or remove it to add Customer.fullName as a new attribute",
            ])
        // Neither is also reported as added.
        #expect(!diff.changes.contains { $0.kind == .entityAdded || $0.kind == .attributeAdded })
    }

    @Test("two attributes claiming the same one: ambiguous")
    func ambiguousExplicit() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.entity(&model, "Customer") {
                $0.attributes.removeAll { $0.name == "name" }
                $0.attributes.append(AttributeDescription(name: "first", type: .string, renamedFrom: "name"))
                $0.attributes.append(AttributeDescription(name: "last", type: .string, renamedFrom: "name"))
            }
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.refusals.map(\.reason) == [
                "Customer.first (renamed_from: name) and Customer.last (renamed_from: name) both claim attribute name of Customer in version 1"
            ])
        #expect(
            diff.refusals.map(\.fix) == [
                "keep `renamed_from: name` on only one of Customer.first, Customer.last, or write mappings/1-to-2.yml"
            ])
        #expect(try #require(diff.refusals.first).kind == .renameUnresolved)
    }

    @Test("an entity renamed onto a name that still exists: ambiguous")
    func ambiguousWithSameName() throws {
        let v2 = DiffModels.edited { model in
            guard var copy = model.entity(named: "Order") else { return }
            copy.name = "Archive"
            copy.renamedFrom = "Order"
            copy.relationships = []
            model.entities.append(copy)
        }
        let diff = ModelDiff(from: DiffModels.base(), to: v2)
        #expect(
            diff.refusals.map(\.reason) == [
                "Order (same name) and Archive (renamed_from: Order) both claim entity Order of version 1"
            ])
        #expect(diff.refusals.map(\.fix) == ["remove `renamed_from: Order` from Archive, or write mappings/1-to-2.yml"])
    }

    @Test("inferredMapping() throws every refusal")
    func mappingThrows() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.attribute(&model, "Customer", "tier") { $0.type = .int16 }
            DiffModels.relationship(&model, "Customer", "orders") { $0.isToMany = false }
        }
        let error = try #require(throws: FerryError.self) { try InferredMapping.infer(from: DiffModels.base(), to: v2) }
        #expect(error.code == .migration)
        #expect(
            error.description == """
                error: cannot infer a mapping from Shop version 1 to version 2: 2 changes need a mapping file (mappings/1-to-2.yml)
                  Customer.tier: Customer.tier changes type from string to int16; lightweight migration converts only lossless widenings; fix: write mappings/1-to-2.yml with an expression that converts Customer.tier, or keep it string
                  Customer.orders: Customer.orders becomes to-one; a stored Customer linked to several Order records would have to lose all but one; fix: keep it to-many, or write mappings/1-to-2.yml that chooses the Order to keep
                """)
    }
}

@Suite("Model diff: renames across versions")
struct ModelDiffChainTests {
    /// v2 renames Order → Purchase and Customer.name → fullName; v3 renames Purchase.total →
    /// amount and Customer.fullName → displayName.
    static func chain() -> (ObjectModel, ObjectModel, ObjectModel) {
        let v1 = DiffModels.base()
        let v2 = DiffModels.edited(version: "2", from: v1) { model in
            DiffModels.entity(&model, "Order") {
                $0.name = "Purchase"
                $0.renamedFrom = "Order"
            }
            DiffModels.relationship(&model, "Customer", "orders") { $0.destination = "Purchase" }
            DiffModels.attribute(&model, "Customer", "name") {
                $0.name = "fullName"
                $0.renamedFrom = "name"
            }
            DiffModels.entity(&model, "Customer") { $0.indexes = [IndexDescription(attributes: ["fullName"])] }
        }
        let v3 = DiffModels.edited(version: "3", from: v2) { model in
            DiffModels.attribute(&model, "Purchase", "total") {
                $0.name = "amount"
                $0.renamedFrom = "total"
            }
            DiffModels.attribute(&model, "Customer", "fullName") {
                $0.name = "displayName"
                $0.renamedFrom = "fullName"
            }
            DiffModels.entity(&model, "Customer") { $0.indexes = [IndexDescription(attributes: ["displayName"])] }
        }
        return (v1, v2, v3)
    }

    @Test("a rename declared in v2 still resolves from v1 to v3")
    func throughIntermediate() throws {
        let (v1, v2, v3) = Self.chain()
        let diff = ModelDiff(from: v1, to: v3, through: [v2])
        #expect(
            diff.changes.map { "\($0.subject): \($0.detail)" } == [
                "Customer.displayName: renamed from name",
                "Purchase: renamed from Order",
                "Purchase.amount: renamed from total",
            ])
        let mapping = try diff.inferredMapping()
        #expect(mapping.entity(named: "Purchase")?.source == "Order")
        #expect(mapping.entity(named: "Purchase")?.attribute(named: "amount")?.source == "total")
        #expect(mapping.entity(named: "Customer")?.attribute(named: "displayName")?.source == "name")
        #expect(mapping.entity(named: "Customer")?.relationship(named: "orders")?.source == "orders")
        #expect(mapping.sourceVersion == "1")
        #expect(mapping.destinationVersion == "3")
    }

    @Test("the same from a bundle, and step by step")
    func bundle() throws {
        let (v1, v2, v3) = Self.chain()
        let bundle = ModelBundle(name: "Shop", versions: [v1, v2, v3], currentVersion: "3")
        let diff = try ModelDiff(bundle: bundle, from: "1", to: "3")
        #expect(diff.intermediates.map(\.version) == ["2"])
        #expect(try diff.inferredMapping().entity(named: "Purchase")?.attribute(named: "amount")?.source == "total")
        let steps = try ModelDiff.steps(in: bundle, from: "1", to: "3")
        #expect(steps.map { "\($0.source.version)→\($0.destination.version)" } == ["1→2", "2→3"])
        #expect(steps.allSatisfy { $0.isInferable })
        #expect(try ModelDiff.steps(in: bundle, from: "3", to: "3").isEmpty)
        let backwards = try #require(throws: FerryError.self) { try ModelDiff.steps(in: bundle, from: "3", to: "1") }
        #expect(
            backwards.description
                == "error: version 1 comes before version 3 in model Shop; ferry migrates only to later versions")
        let unknown = try #require(throws: FerryError.self) { try ModelDiff(bundle: bundle, from: "l", to: "3") }
        #expect(unknown.description == "error: model Shop has no version 'l' (versions: 1, 2, 3)")
    }

    @Test("without the intermediate version, a rename declared in v3 against v2's name fails")
    func withoutIntermediate() throws {
        let (v1, _, v3) = Self.chain()
        let diff = ModelDiff(from: v1, to: v3)
        // Purchase keeps v2's `renamed_from: Order`, which v1 happens to have; fullName is v2's name only.
        #expect(
            diff.refusals.map(\.reason) == [
                "`renamed_from: fullName` on Customer.displayName names no attribute of Customer in version 1"
            ])
        #expect(diff.refusals.map(\.fix) == ["correct it or remove it to add Customer.displayName as a new attribute"])
    }

    @Test("an entity removed in v2 and added again in v3 is new in v3")
    func removedAndReadded() throws {
        let v1 = DiffModels.base()
        let v2 = DiffModels.edited(version: "2", from: v1) { model in
            model.entities.removeAll { $0.name == "Order" }
            DiffModels.entity(&model, "Customer") { $0.relationships = [] }
        }
        let v3 = DiffModels.edited(version: "3", from: v1) { _ in }
        let diff = ModelDiff(from: v1, to: v3, through: [v2])
        let mapping = try diff.inferredMapping()
        #expect(mapping.entity(named: "Order")?.source == nil)
        #expect(mapping.droppedEntities == ["Order"])
        #expect(ModelDiff(from: v1, to: v3).isEmpty)
    }

    // MARK: - Wording (issue 25)

    @Test("equal defaults read as different kinds are no change; a real change is reported")
    func equalDefaults() throws {
        var v1 = DiffModels.base()
        DiffModels.attribute(&v1, "Order", "total") { $0.defaultValue = .decimal("0") }
        let same = DiffModels.edited(from: v1) { model in
            DiffModels.attribute(&model, "Order", "total") { $0.defaultValue = .integer(0) }
        }
        #expect(ModelDiff(from: v1, to: same).isEmpty, "\(ModelDiff(from: v1, to: same).changes)")
        let changed = DiffModels.edited(from: v1) { model in
            DiffModels.attribute(&model, "Order", "total") { $0.defaultValue = .double(0.5) }
        }
        #expect(try onlyChange(ModelDiff(from: v1, to: changed)).detail == "default 0 → 0.5 (stored values are kept)")
    }

    @Test("a Transformable attribute is named as such, not as the binary it is stored as")
    func transformableNamed() throws {
        let v2 = DiffModels.edited { model in
            DiffModels.entity(&model, "Customer") { entity in
                var tags = AttributeDescription(name: "tags", type: .binary)
                tags.coreDataKind = .transformable(transformer: "NSSecureUnarchiveFromData", valueClass: "[String]")
                entity.attributes.append(tags)
            }
        }
        let change = try onlyChange(ModelDiff(from: DiffModels.base(), to: v2))
        #expect(change.detail == "added (transformable (NSSecureUnarchiveFromData), optional)")
    }

    @Test("a new to-many inverse of a kept to-one shows the to-one's links; a new relationship of its own starts empty")
    func newInverseOfKeptToOne() throws {
        let v1 = DiffModels.edited(version: "1") { model in
            DiffModels.entity(&model, "Customer") { $0.relationships = [] }
            DiffModels.entity(&model, "Order") { $0.relationships[0].inverse = nil }
        }
        let changes = ModelDiff(from: v1, to: DiffModels.base(version: "2")).changes
        #expect(changes.map(\.kind) == [.relationshipAdded, .relationshipInverseChanged])
        let inverse = try #require(changes.first)
        #expect(
            inverse.detail == "added (to-many Order, optional, the inverse of Order.customer, whose links it shows)")

        let own = DiffModels.edited { model in
            DiffModels.entity(&model, "Customer") {
                $0.relationships.append(
                    RelationshipDescription(name: "favorites", destination: "Order", isToMany: true))
            }
        }
        #expect(
            try onlyChange(ModelDiff(from: DiffModels.base(), to: own)).detail
                == "added (to-many Order, optional, starts empty)")
    }
}
