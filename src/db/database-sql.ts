/** SQL of the embedded database's set-up. (CREATE DATABASE takes an identifier, built where it runs.) */

export const databaseExists = 'SELECT 1 FROM pg_database WHERE datname = $1';
