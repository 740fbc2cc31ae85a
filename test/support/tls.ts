/**
 * A self-signed certificate for localhost and 127.0.0.1 and its key, for tests that serve HTTPS
 * on a loopback port. Test use only: it protects nothing.
 */
export const testCertificate = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUXMpt4y0o/bOpFBtiyEvJSo3iEtwwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMzA2MDczN1oYDzIxMjYxMDMw
MDYwNzM3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAR/NUDP8dARLH/L3jviqOAmr6G4DhHVmBRDiXv9uWapLMFlpuescxge
vSJCcZCnCpH95s+6m/dF/eG+ndaHOAWNo28wbTAdBgNVHQ4EFgQUaCaCxErUQh41
4V+r3qUrZ4wgxsUwHwYDVR0jBBgwFoAUaCaCxErUQh414V+r3qUrZ4wgxsUwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhAJiLOVR3NQGLsE0cRzdaWkXLxWLjZW/yb3c4TE/wjRehAiEA
lw1kxcAMMHKDAc/nw1vEj7mHie7xH0vRG7F7+WuJSu0=
-----END CERTIFICATE-----
`;

export const testCertificateKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgywq/0DyKUsQ6Qsv3
QP39110atxq90N0vY2Kb2EtrLRyhRANCAAR/NUDP8dARLH/L3jviqOAmr6G4DhHV
mBRDiXv9uWapLMFlpuescxgevSJCcZCnCpH95s+6m/dF/eG+ndaHOAWN
-----END PRIVATE KEY-----
`;
