-- The shop database of the text-to-sql suite. smevals builds it into an SQLite database in
-- its cache folder (keyed by this file's sha256) the first time a Check reads it; editing
-- this file makes the grader a new version, so `smevals grade` grades every Run again.

CREATE TABLE customers (
  id      INTEGER PRIMARY KEY,
  name    TEXT NOT NULL,
  city    TEXT,                      -- NULL when the customer gave none
  joined  TEXT NOT NULL              -- ISO date
);

CREATE TABLE products (
  id        INTEGER PRIMARY KEY,
  name      TEXT NOT NULL,
  category  TEXT NOT NULL,
  price     REAL NOT NULL            -- euros
);

CREATE TABLE orders (
  id           INTEGER PRIMARY KEY,
  customer_id  INTEGER NOT NULL REFERENCES customers(id),
  ordered      TEXT NOT NULL,        -- ISO date
  status       TEXT NOT NULL         -- 'shipped', 'pending' or 'cancelled'
);

CREATE TABLE order_items (
  order_id    INTEGER NOT NULL REFERENCES orders(id),
  product_id  INTEGER NOT NULL REFERENCES products(id),
  quantity    INTEGER NOT NULL,
  PRIMARY KEY (order_id, product_id)
);

INSERT INTO customers VALUES
  (1, 'Ada Lovelace',    'London',  '2024-01-15'),
  (2, 'Alan Turing',     'Manchester', '2024-02-03'),
  (3, 'Grace Hopper',    'New York', '2024-02-20'),
  (4, 'Edsger Dijkstra', 'Austin',  '2024-03-11'),
  (5, 'Barbara Liskov',  'Boston',  '2024-04-02'),
  (6, 'Donald Knuth',    NULL,      '2024-05-19'),
  (7, 'Frances Allen',   'New York', '2024-06-07'),
  (8, 'John Backus',     NULL,      '2024-07-23');

INSERT INTO products VALUES
  (1,  'The Art of Computer Programming', 'books',       189.99),
  (2,  'Structure and Interpretation',    'books',        45.50),
  (3,  'Mechanical Keyboard',             'hardware',    129.00),
  (4,  'USB-C Cable',                     'hardware',      9.99),
  (5,  'Noise-cancelling Headphones',     'hardware',    249.00),
  (6,  'Coffee Mug',                      'kitchen',      12.50),
  (7,  'Espresso Beans 1kg',              'kitchen',      24.90),
  (8,  'Rubber Duck',                     'toys',          4.99),
  (9,  'Compilers: Principles',           'books',        95.00),
  (10, 'Desk Lamp',                       'hardware',     39.90);

INSERT INTO orders VALUES
  (1,  1, '2024-03-01', 'shipped'),
  (2,  1, '2024-04-12', 'shipped'),
  (3,  2, '2024-04-15', 'cancelled'),
  (4,  3, '2024-05-02', 'shipped'),
  (5,  3, '2024-05-30', 'pending'),
  (6,  4, '2024-06-14', 'shipped'),
  (7,  5, '2024-06-20', 'shipped'),
  (8,  1, '2024-07-04', 'pending'),
  (9,  6, '2024-07-19', 'shipped'),
  (10, 7, '2024-08-08', 'shipped'),
  (11, 3, '2024-08-21', 'shipped'),
  (12, 5, '2024-09-09', 'cancelled');

INSERT INTO order_items VALUES
  (1, 1, 1), (1, 8, 2),
  (2, 6, 4), (2, 7, 2),
  (3, 10, 1),
  (4, 3, 1), (4, 4, 3), (4, 8, 1),
  (5, 2, 1),
  (6, 9, 1), (6, 6, 2),
  (7, 10, 1), (7, 4, 2),
  (8, 7, 3),
  (9, 1, 1), (9, 2, 1), (9, 9, 1),
  (10, 3, 1), (10, 8, 5),
  (11, 7, 1), (11, 4, 1),
  (12, 6, 1);
