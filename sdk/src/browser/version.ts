/** The browser SDK's version, that of the package (a unit test keeps them equal); the service serves it pinned under /sdk/v<version>/. */
export const version = '0.1.0';
