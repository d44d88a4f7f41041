import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// The Shop sample bundle and its versions.
enum ShopSample {
    static let path = TestPaths.packageRoot.appendingPathComponent("samples/models/Shop").path
    static func bundle() throws -> ModelBundle { try ModelLoader().load(path: path) }
    static func versions(_ from: String, _ to: String) throws -> (ObjectModel, ObjectModel) {
        let bundle = try bundle()
        return (try #require(bundle.version(from)), try #require(bundle.version(to)))
    }
}

/// A readable form of an attribute or relationship value, for comparing whole mappings.
func describe(_ value: MappingModel.AttributeValue) -> String {
    switch value {
    case .copy(let source, let conversion, let valueIfNil):
        var text = "copy \(source)"
        if let conversion { text += " as \(conversion.to.rawValue)" }
        if !valueIfNil.isNull { text += " or \(valueIfNil)" }
        return text
    case .expression(let text): return "= \(text)"
    case .constant(let value): return "constant \(value)"
    }
}

func describe(_ value: MappingModel.RelationshipValue) -> String {
    switch value {
    case .carry(let source): return "carry \(source)"
    case .keyPath(let path): return "key path \(path.joined(separator: "."))"
    case .fromMapping(let name): return "from mapping \(name)"
    case .none: return "none"
    }
}

func describe(_ mapping: MappingModel.EntityMapping) -> [String] {
    mapping.attributes.map { "\($0.destination): \(describe($0.value))" }
        + mapping.relationships.map { "\($0.destination): \(describe($0.value))" }
}

@Suite("MappingLoader")
struct MappingLoaderTests {
    static func fixture(_ name: String) -> String { Fixtures.path("mappings/\(name).yml") }

    /// The rendered errors of loading a fixture for Shop 2 → 3.
    static func errors(_ name: String) throws -> [String]? {
        let (v2, v3) = try ShopSample.versions("2", "3")
        return renderedErrors { _ = try MappingLoader().load(path: fixture(name), source: v2, destination: v3) }
    }

    @Test("Shop 2-to-3.yml: inferred mappings with the file's entries laid over them")
    func shopMapping() throws {
        let (v2, v3) = try ShopSample.versions("2", "3")
        let file = ShopSample.path + "/mappings/2-to-3.yml"
        let mapping = try MappingLoader().load(path: file, source: v2, destination: v3)
        func at(_ line: Int, _ column: Int) -> InputLocation { InputLocation(file: file, line: line, column: column) }
        #expect(mapping.location == at(1, 1))
        #expect(mapping.source.version == "2")
        #expect(mapping.destination.version == "3")
        // Brand runs before Product, whose brand comes from the Brand mapping.
        #expect(mapping.entities.map(\.name) == ["Customer", "Brand", "Product", "Order", "LineItem", "Review"])
        #expect(mapping.entities.map(\.destination) == ["Customer", "Brand", "Product", "Order", "LineItem", "Review"])
        #expect(mapping.entities.map(\.source) == ["Customer", "Product", "Product", "Order", "LineItem", "Review"])

        let customer = try #require(mapping.entity(named: "Customer"))
        #expect(
            describe(customer) == [
                "id: copy id", "email: copy email",
                "first_name: = split(trim($source.full_name), \" \", 0)",
                "last_name: = after(trim($source.full_name), \" \")",
                "phone: copy phone", "age: copy age", "balance: copy balance or 0", "created_at: copy created_at",
                "active: copy active or true",
                "tier: copy tier or standard", "address: copy address",
                "orders: carry orders", "reviews: carry reviews",
            ])
        #expect(customer.attribute(named: "first_name")?.location == at(10, 19))
        #expect(customer.attribute(named: "last_name")?.location == at(11, 18))
        #expect(customer.attribute(named: "id")?.location == nil)
        #expect(customer.policy == "PhoneNormalizer")
        #expect(customer.policyLocation == at(13, 13))
        #expect(customer.filter == nil)
        #expect(customer.distinct == nil)
        #expect(customer.location == at(7, 3))

        let brand = try #require(mapping.entity(named: "Brand"))
        #expect(brand.distinct == "$source.brand")
        #expect(brand.distinctLocation == at(18, 15))
        #expect(describe(brand) == ["name: = $source.brand", "products: none"])
        #expect(brand.attribute(named: "name")?.location == at(20, 13))
        #expect(brand.policy == nil)
        #expect(brand.location == at(16, 3))

        let product = try #require(mapping.entity(named: "Product"))
        #expect(
            describe(product) == [
                "sku: copy sku", "name: copy name", "price: copy price", "weight_kg: copy weight_kg", "tags: copy tags",
                "uuid: copy uuid",
                "brand: from mapping Brand", "order_items: carry order_items", "reviews: carry reviews",
            ])
        #expect(product.relationship(named: "brand")?.location == at(25, 14))
        #expect(product.location == at(22, 3))

        // Not in the file: inferred, without locations.
        let order = try #require(mapping.entity(named: "Order"))
        #expect(
            describe(order) == [
                "number: copy number", "placed_at: copy placed_at", "status: copy status or pending",
                "total: copy total",
                "customer: carry customer", "items: carry items",
            ])
        #expect(order.location == nil)
        #expect(
            describe(try #require(mapping.entity(named: "LineItem"))) == [
                "quantity: copy quantity", "unit_price: copy unit_price", "order: carry order",
                "product: carry product",
            ])
        #expect(
            describe(try #require(mapping.entity(named: "Review"))) == [
                "rating: copy rating", "body: copy body", "created_at: copy created_at", "customer: carry customer",
                "product: carry product",
            ])
    }

    @Test("a second mapping into an entity, an entity made empty, constants, copies and a filter")
    func extraMapping() throws {
        let (v2, v3) = try ShopSample.versions("2", "3")
        let file = Self.fixture("extra-mapping")
        let mapping = try MappingLoader().load(path: file, source: v2, destination: v3)
        #expect(
            mapping.entities.map(\.name) == [
                "Customer", "Brand", "LegacyBrand", "Product", "Order", "LineItem", "Review",
            ])
        let legacy = try #require(mapping.entity(named: "LegacyBrand"))
        #expect(legacy.destination == "Brand")
        #expect(legacy.source == "Customer")
        #expect(legacy.distinct == "$source.tier")
        // A distinct mapping copies nothing it is not told to.
        #expect(describe(legacy) == ["name: = concat(\"tier \", $source.tier)", "products: none"])
        let customer = try #require(mapping.entity(named: "Customer"))
        #expect(customer.filter == "active == true")
        #expect(customer.filterLocation == InputLocation(file: file, line: 5, column: 13))
        let review = try #require(mapping.entity(named: "Review"))
        #expect(review.source == nil)
        #expect(
            describe(review) == [
                "rating: constant nil", "body: constant nil", "created_at: constant nil", "customer: none",
                "product: none",
            ])
        let order = try #require(mapping.entity(named: "Order"))
        #expect(
            describe(order) == [
                "number: copy number", "placed_at: copy placed_at", "status: constant paid", "total: copy total",
                "customer: carry customer", "items: carry items",
            ])
        #expect(order.attribute(named: "status")?.location == InputLocation(file: file, line: 27, column: 23))
    }

    @Test("unknown keys, with suggestions")
    func unknownKeys() throws {
        let file = Self.fixture("unknown-keys")
        #expect(
            try Self.errors("unknown-keys") == [
                "\(file):2:1: error: unknown key 'too' in the mapping file; did you mean 'to'?",
                "\(file):5:5: error: unknown key 'atributes' in the mapping of 'Customer'; did you mean 'attributes'?",
                "\(file):11:31: error: unknown key 'mapp' in the value of 'brand'",
                "\(file):16:24: error: unknown key 'sourc' in the value of 'name'; did you mean 'source'?",
            ])
    }

    @Test("unknown destination entities, attributes and relationships; unknown source entities and properties")
    func unknownNames() throws {
        let file = Self.fixture("unknown-names")
        #expect(
            try Self.errors("unknown-names") == [
                "\(file):2:3: error: unknown destination entity 'Costumer' in Shop version 3; did you mean 'Customer'?\n  a second mapping into an entity needs `entity:` naming it",
                "\(file):6:13: error: unknown source entity 'Custome' in Shop version 2; did you mean 'Customer'?",
                "\(file):7:3: error: the file does not cover Product.brand: Product.brand changes from an attribute to a relationship; add `relationships: {brand: …}` under `Product` in this file",
                "\(file):9:7: error: Product has no attribute 'prise'; did you mean 'price'?",
                "\(file):10:7: error: 'brand' is a relationship of Product; map it under 'relationships'",
                "\(file):12:7: error: Product has no relationship 'brnd'; did you mean 'brand'?",
                "\(file):13:7: error: 'name' is an attribute of Product; map it under 'attributes'",
                "\(file):21:25: error: source entity Review has no relationship 'prodct'; did you mean 'product'?",
                "\(file):22:26: error: source entity Review has no relationship 'email'",
                "\(file):25:26: error: source entity LineItem has no attribute 'quantty'; did you mean 'quantity'?",
            ])
    }

    @Test("mapping names: taken by an entity, a mapping without a source, filter and distinct without one")
    func badEntities() throws {
        let file = Self.fixture("bad-entities")
        #expect(
            try Self.errors("bad-entities") == [
                "\(file):8:3: error: the mapping name 'Order' is an entity of Shop version 3; give a mapping into Brand another name",
                "\(file):12:13: error: unknown destination entity 'Brnd' in Shop version 3; did you mean 'Brand'?",
                "\(file):13:3: error: the mapping 'MoreBrands' into Brand needs a 'source' (an entity of Shop version 2)",
                "\(file):19:13: error: 'filter' needs a source entity, but the mapping 'NoSource' has none",
                "\(file):20:15: error: 'distinct' needs a source entity, but the mapping 'NoSource' has none",
            ])
    }

    @Test("`mapping:` naming an unknown mapping, one making other objects, or one from another source")
    func badMappingReferences() throws {
        let file = Self.fixture("bad-mapping-reference")
        #expect(
            try Self.errors("bad-mapping-reference") == [
                "\(file):7:24: error: no entity mapping named 'Brnd'; did you mean 'Brand'?",
                "\(file):8:26: error: the mapping 'Customer' makes Customer objects, but Product.reviews links to Review",
                "\(file):16:26: error: the mapping 'Product' maps from Product, but 'Review' maps from Review; `mapping:` links the objects made from the same source object",
            ])
    }

    @Test("mappings that need each other first")
    func cycle() throws {
        let file = Self.fixture("cycle")
        #expect(
            try Self.errors("cycle") == [
                "\(file):8:3: error: the mappings 'Brand', 'Product' refer to each other through `mapping:`; one of them must run first"
            ])
    }

    @Test("from/to and the file name must match the models")
    func versions() throws {
        let wrong = Self.fixture("wrong-versions")
        #expect(
            try Self.errors("wrong-versions") == [
                "\(wrong):1:7: error: 'from: 1' does not match the source model, Shop version 2"
            ])
        let misnamed = Self.fixture("1-to-2")
        #expect(
            try Self.errors("1-to-2") == [
                "\(misnamed):1:1: error: the mapping file '1-to-2.yml' is named for versions 1 → 2, but it is used for Shop 2 → 3\n  name it 2-to-3.yml, or use it for the step its name says"
            ])
    }

    @Test("filters that do not parse or bind, located in the file")
    func badFilters() throws {
        let file = Self.fixture("bad-filters")
        #expect(
            try Self.errors("bad-filters") == [
                "\(file):3:30: error: expected a predicate after 'AND' but found end of input",
                "\(file):7:13: error: Product has no attribute 'pricee'; did you mean 'price'?",
                "\(file):11:44: error: Customer has no attribute 'emial'; did you mean 'email'?",
            ])
    }

    @Test(
        "bad values: empty expressions, nil for non-optional, bad constants, wrong copies and relationship values, bad policy names"
    )
    func badValues() throws {
        let file = Self.fixture("bad-values")
        #expect(
            try Self.errors("bad-values") == [
                "\(file):4:20: error: the expression for 'first_name' is empty",
                "\(file):5:11: error: Customer.id is non-optional; it cannot be set to nil",
                "\(file):7:24: error: the value for Customer.balance is not a valid decimal: 'abc' is not a decimal number",
                "\(file):8:12: error: expected an expression, {value: …} or {source: …} for 'age' but found a list",
                "\(file):9:23: error: Customer.created_at is date and Customer.email is string; only lossless widenings are copied, convert it with an expression",
                "\(file):11:15: error: expected {mapping: …}, {source: …} or none for 'orders' but found 'many'",
                "\(file):12:13: error: 'policy' names a registered policy, like PhoneNormalizer; 'Phone Normalizer' is not a name",
            ])
    }

    @Test("value expressions that do not parse, bind or fit, located in the file")
    func badExpressions() throws {
        let file = Self.fixture("bad-expressions")
        #expect(
            try Self.errors("bad-expressions") == [
                "\(file):4:33: error: Customer has no attribute 'fullname'; did you mean 'full_name'?",
                "\(file):5:18: error: unknown function 'lowercse'; did you mean 'lowercase'?",
                "\(file):6:12: error: '$source.full_name' is string, but attribute 'age' is int16; convert it with int(…)",
                "\(file):7:22: error: expected a value after '+' but found end of input",
                "\(file):8:16: error: unknown parameter '$region'; the job defines no parameters",
                "\(file):14:23: error: Product has no attribute 'brnd'; did you mean 'brand'?",
            ])
        // With the parameter given, only the others remain.
        let (v2, v3) = try ShopSample.versions("2", "3")
        let errors = renderedErrors {
            _ = try MappingLoader().load(
                path: file, source: v2, destination: v3, parameters: ["region": .string("{\"country\": \"NZ\"}")])
        }
        #expect(errors?.count == 5)
    }

    @Test("every change inference refused that the file does not cover, with its reason and the entry to add")
    func uncoveredRefusals() throws {
        let file = Self.fixture("uncovered")
        #expect(
            try Self.errors("uncovered") == [
                "\(file):4:1: error: the file does not cover Product.brand: Product.brand changes from an attribute to a relationship; add `relationships: {brand: …}` under `Product` in this file",
                "\(file):5:3: error: the file does not cover Customer.first_name: new non-optional attribute Customer.first_name has no default value; stored Customer records would have none; add `attributes: {first_name: …}` under `Customer` in this file",
                "\(file):9:3: error: the mapping 'Review' gives non-optional Review.rating no value (Customer has no attribute of that name and type, and it has no default); add `attributes: {rating: …}` under `Review` in this file",
                "\(file):9:3: error: the mapping 'Review' leaves non-optional Review.customer empty; add `relationships: {customer: …}` under `Review` in this file",
                "\(file):9:3: error: the mapping 'Review' leaves non-optional Review.product empty; add `relationships: {product: …}` under `Review` in this file",
            ])
        let empty = Self.fixture("empty")
        #expect(
            try Self.errors("empty") == [
                "\(empty):1:1: error: the file does not cover Customer.first_name: new non-optional attribute Customer.first_name has no default value; stored Customer records would have none; add `attributes: {first_name: …}` under `Customer` in this file",
                "\(empty):1:1: error: the file does not cover Product.brand: Product.brand changes from an attribute to a relationship; add `relationships: {brand: …}` under `Product` in this file",
            ])
    }

    @Test("YAML syntax errors and missing files")
    func unreadable() throws {
        let (v2, v3) = try ShopSample.versions("2", "3")
        let directory = TemporaryDirectory()
        let broken = try directory.write("2-to-3.yml", "entities:\n  Customer: {attributes: [\n")
        let errors = renderedErrors { _ = try MappingLoader().load(path: broken, source: v2, destination: v3) }
        #expect(errors?.count == 1)
        #expect(errors?.first?.hasPrefix("\(broken):3:1: error: ") == true)
        let missing = directory.file("3-to-4.yml")
        #expect(
            renderedErrors { _ = try MappingLoader().load(path: missing, source: v2, destination: v3) } == [
                "\(missing): error: cannot read '\(missing)': No such file or directory"
            ])
    }

    @Test("a step's mapping file in a bundle, or inference when there is none")
    func bundleSteps() throws {
        let bundle = try ShopSample.bundle()
        let expected = URL(fileURLWithPath: ShopSample.path).appendingPathComponent("mappings/2-to-3.yml").path
        #expect(MappingLoader.mappingFilePath(in: bundle, from: "2", to: "3") == expected)
        #expect(MappingLoader.existingMappingFile(in: bundle, from: "2", to: "3") == expected)
        #expect(MappingLoader.existingMappingFile(in: bundle, from: "1", to: "2") == nil)
        #expect(
            MappingLoader.mappingFilePath(
                in: ModelBundle(name: "x", versions: [], currentVersion: "1"), from: "1", to: "2") == nil)

        let steps = try ModelDiff.steps(in: bundle, from: "1", to: "3")
        #expect(steps.count == 2)
        let first = try MappingLoader().mapping(for: steps[0], in: bundle)
        #expect(first.location == nil)
        #expect(first.entities.map(\.name) == ["Customer", "Product", "Order", "LineItem", "Review"])
        #expect(first.entity(named: "LineItem")?.source == "OrderItem")
        #expect(
            describe(try #require(first.entity(named: "Customer"))).prefix(4) == [
                "id: copy id", "email: copy email", "full_name: copy name", "phone: copy phone",
            ])
        #expect(describe(try #require(first.entity(named: "Customer"))).contains("tier: constant standard"))
        let second = try MappingLoader().mapping(for: steps[1], in: bundle)
        #expect(second.location?.file == expected)
        #expect(second.entity(named: "Product")?.relationship(named: "brand")?.value == .fromMapping("Brand"))
    }
}
