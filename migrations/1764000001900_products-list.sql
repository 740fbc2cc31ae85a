-- Up Migration

-- The products list in its order (docs/api.md, Products): newest first by when each product was
-- first sent, ties by productId. A search walks it by this index alone (the ids are in it).
CREATE INDEX products_list ON products (account_id, created_position DESC, product_id DESC);

-- Down Migration

DROP INDEX products_list;
