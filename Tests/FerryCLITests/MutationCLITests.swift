import FerryTestSupport
import Foundation
import Testing

@Suite("ferry update and ferry delete", .serialized)
struct MutationCLITests {
    static let model = """
        name: Shop
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, optional: false}
              age: {type: int16, min: 0, max: 150}
            relationships:
              orders: {destination: Order, to_many: true, inverse: customer, delete_rule: cascade}
          Order:
            attributes:
              number: string
            relationships:
              customer: {destination: Customer, inverse: orders, optional: false}
        """

    func makeStore() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-mutation")
        try directory.write("shop.yml", Self.model)
        try directory.write("customers.csv", "id,email,age\n1,Ann@X.io,34\n2,bob@x.io,19\n3,CY@x.io,52\n")
        try directory.write("orders.csv", "number,customer\nA-1,1\nA-2,1\nB-1,2\n")
        try directory.write(
            "load.yml",
            """
            store: shop.sqlite
            model: shop.yml
            steps:
              - import: {source: customers.csv, entity: Customer}
              - import: {source: orders.csv, entity: Order, relationships: {customer: {match: id}}}
            """)
        let load = try runFerry(["run", "load.yml", "--quiet"], cwd: directory.path)
        #expect(load.exitCode == 0, "\(load.stderr)")
        return directory
    }

    func query(_ sql: String, in directory: TemporaryDirectory) throws -> String {
        try sqlite3(directory.file("shop.sqlite"), sql)
    }

    @Test("ferry update sets constants and expressions, with --dry-run and a JSON report")
    func update() throws {
        let directory = try makeStore()
        let dry = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "age > 30", "--set",
                "email==lowercase(email)", "--set", "age=99", "--dry-run",
            ],
            cwd: directory.path)
        #expect(dry.exitCode == 0)
        #expect(dry.stdout.contains("step 1 update Customer (dry run, rolled back): updated 2 in "))
        #expect(
            try query("SELECT email, age FROM Customer ORDER BY id", in: directory)
                == "Ann@X.io|34\nbob@x.io|19\nCY@x.io|52\n")

        let real = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "age > 30", "--set",
                "email==lowercase(email)", "--set", "age=99", "--report", "report.json",
            ],
            cwd: directory.path)
        #expect(real.exitCode == 0, "\(real.stderr)")
        #expect(
            try query("SELECT email, age FROM Customer ORDER BY id", in: directory)
                == "ann@x.io|99\nbob@x.io|19\ncy@x.io|99\n")
        let report = try String(contentsOfFile: directory.file("report.json"), encoding: .utf8)
        #expect(report.contains("\"updated\" : 2"))

        let bad = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set",
                "age==age * 2",
            ], cwd: directory.path)
        #expect(bad.exitCode == 1)
        #expect(
            bad.stderr
                == "error: the new value of Customer.age breaks 'max: 150' for 2 records (ferry_pk 1, 3); nothing was changed\n"
        )
        let typo = try runFerry(
            ["update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "agee > 1", "--set", "age=1"],
            cwd: directory.path)
        #expect(typo.exitCode == 64)
        #expect(typo.stderr == "--where:1:1: error: Customer has no attribute 'agee'; did you mean 'age'?\n")
    }

    @Test(
        "--set and set: take value expressions: bare names or $source, to-one key paths, every function; failures name the object"
    )
    func valueExpressions() throws {
        let directory = try makeStore()
        let orders = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Order", "--where", "TRUEPREDICATE", "--set",
                "number==concat(number, '/', lowercase(customer.email))",
            ],
            cwd: directory.path)
        #expect(orders.exitCode == 0, "\(orders.stderr)")
        #expect(
            try query("SELECT number FROM \"Order\" ORDER BY number", in: directory)
                == "A-1/ann@x.io\nA-2/ann@x.io\nB-1/bob@x.io\n")

        try directory.write(
            "adjust.yml",
            """
            store: shop.sqlite
            model: shop.yml
            steps:
              - update:
                  entity: Customer
                  where: TRUEPREDICATE
                  set:
                    email: =substring($source.email, 0, 2) + "@y.io"
                    age: "=age > 30 ? age - 1 : age"
            """)
        let job = try runFerry(["run", "adjust.yml", "--quiet"], cwd: directory.path)
        #expect(job.exitCode == 0, "\(job.stderr)")
        #expect(
            try query("SELECT email, age FROM Customer ORDER BY id", in: directory)
                == "An@y.io|33\nbo@y.io|19\nCY@y.io|51\n")

        let before = try query("SELECT email, age FROM Customer ORDER BY id", in: directory)
        let zero = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set",
                "age==age / (age - 19)", "--set", "email=x@y.io",
            ],
            cwd: directory.path)
        #expect(zero.exitCode == 1)
        #expect(
            zero.stderr
                == "--set #1:1:10: error: cannot evaluate age / (age - 19) for Customer ferry_pk 2: division by zero\n")
        #expect(try query("SELECT email, age FROM Customer ORDER BY id", in: directory) == before)

        let joined = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set",
                "email==email + id",
            ], cwd: directory.path)
        #expect(joined.exitCode == 64)
        #expect(
            joined.stderr
                == "--set #1:1:14: error: '+' joins strings, but id (integer) is not a string; convert it with string(…) or use concat(…)\n"
        )
        let mismatch = try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set",
                "age==age * 1.5",
            ], cwd: directory.path)
        #expect(mismatch.exitCode == 64)
        #expect(
            mismatch.stderr
                == "--set #1:1:6: error: 'age * 1.5' is decimal, but attribute 'age' is int16; convert it with int(…)\n"
        )
        #expect(try query("SELECT email, age FROM Customer ORDER BY id", in: directory) == before)
    }

    @Test("ferry delete applies delete rules, or ignores them and reports the blocking references")
    func delete() throws {
        let directory = try makeStore()
        let ignored = try runFerry(
            [
                "delete", "--store", "shop.sqlite", "--entity", "Customer", "--where", "id == 1",
                "--ignore-delete-rules",
            ], cwd: directory.path)
        #expect(ignored.exitCode == 1)
        #expect(
            ignored.stderr.hasPrefix(
                "error: with delete_rules: ignore only the selected Customer objects are deleted, but other objects still refer to them (2 Order objects through Order.customer)"
            ))
        let applied = try runFerry(
            ["delete", "--store", "shop.sqlite", "--entity", "Customer", "--where", "id == 1"], cwd: directory.path)
        #expect(applied.exitCode == 0, "\(applied.stderr)")
        #expect(applied.stdout.contains("step 1 delete Customer: deleted 1, cascade 2 Order in "))
        #expect(try query("SELECT count(*) FROM Customer; SELECT count(*) FROM \"Order\";", in: directory) == "2\n1\n")
    }
}
