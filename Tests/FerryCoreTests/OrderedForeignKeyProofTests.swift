import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

@Suite("Foreign keys proven in key order")
struct OrderedForeignKeyProofTests {
    let dir = TemporaryDirectory()

    func connection() throws -> Connection {
        let connection = try Connection(path: dir.file("keys.sqlite"))
        try connection.executeScript(
            """
            CREATE TABLE parent (ferry_pk INTEGER PRIMARY KEY, code TEXT UNIQUE);
            CREATE TABLE child (ferry_pk INTEGER PRIMARY KEY, up INTEGER REFERENCES parent(ferry_pk), other INTEGER REFERENCES parent(ferry_pk));
            CREATE INDEX child_up ON child(up);
            INSERT INTO parent (ferry_pk, code) VALUES (1, 'a'), (2, 'b'), (3, 'c');
            INSERT INTO child (up, other) VALUES (3, NULL), (1, 2), (NULL, NULL), (2, 3);
            """)
        return connection
    }

    @Test("holds for a table whose every reference finds its parent, and for one without foreign keys")
    func holds() throws {
        let connection = try connection()
        let proof = OrderedForeignKeyProof(layout: FerryLayout())
        #expect(proof.holds(forTable: "child", on: connection))
        #expect(proof.holds(forTable: "parent", on: connection))
    }

    @Test("does not hold when any key dangles, or for keys it does not cover: the pragma decides then")
    func doesNotHold() throws {
        let connection = try connection()
        let proof = OrderedForeignKeyProof(layout: FerryLayout())
        try connection.execute("INSERT INTO child (up, other) VALUES (1, 9)")
        #expect(!proof.holds(forTable: "child", on: connection))
        try connection.execute("DELETE FROM child WHERE other = 9")
        try connection.execute("INSERT INTO child (up) VALUES ('x')")
        #expect(!proof.holds(forTable: "child", on: connection))
        try connection.executeScript(
            """
            CREATE TABLE by_code (ferry_pk INTEGER PRIMARY KEY, code TEXT REFERENCES parent(code));
            CREATE TABLE pair (a INTEGER, b INTEGER, PRIMARY KEY (a, b));
            CREATE TABLE by_pair (ferry_pk INTEGER PRIMARY KEY, a INTEGER, b INTEGER, FOREIGN KEY (a, b) REFERENCES pair(a, b));
            """)
        #expect(!proof.holds(forTable: "by_code", on: connection))
        #expect(!proof.holds(forTable: "by_pair", on: connection))
    }
}
