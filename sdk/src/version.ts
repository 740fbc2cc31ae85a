/** The package's version, sent in the User-Agent header (a test keeps it equal to package.json's). */
export const sdkVersion = '0.1.0';

export const userAgent = `tracking-ingestion-sdk/${sdkVersion} node/${process.version}`;
