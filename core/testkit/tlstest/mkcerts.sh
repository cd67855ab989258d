#!/bin/sh
# mkcerts.sh DIR: the certificates of liblock's TLS tests, made with openssl
# in DIR (valid for one day, EC P-256 keys, no passphrase):
#   ca.pem ca.key            a private CA
#   other-ca.pem other-ca.key an unrelated CA
#   server.pem server.key    a server certificate from ca for localhost and 127.0.0.1
#   internal.pem internal.key a server certificate from ca for redis.internal only
#   client.pem client.key    a client certificate from ca (mutual TLS)
#   other.pem other.key      a server certificate from other-ca for localhost and 127.0.0.1
#   garbage.pem              a file that is not PEM
# Used by core/testkit/tlstest (Go), bindings/node/test/tls.test.js and
# bindings/python/tests/test_tls.py.
set -eu
d=$1
mkdir -p "$d"
cd "$d"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
ca() { # name cn
	openssl req -x509 $ec -keyout "$1.key" -out "$1.pem" -days 1 -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-addext "subjectKeyIdentifier=hash" 2>/dev/null
}
leaf() { # name cn san eku [ca]
	openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$4"
		echo "subjectKeyIdentifier=hash"
		echo "authorityKeyIdentifier=keyid,issuer"
		[ -n "$3" ] && echo "subjectAltName=$3"
	} >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "${5:-ca}.pem" -CAkey "${5:-ca}.key" -CAcreateserial -out "$1.pem" -days 1 \
		-extfile "$1.ext" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}
ca ca "liblock test CA"
ca other-ca "liblock other CA"
leaf server localhost "DNS:localhost,IP:127.0.0.1" serverAuth
leaf internal redis.internal "DNS:redis.internal" serverAuth
leaf client "liblock test client" "" clientAuth
leaf other localhost "DNS:localhost,IP:127.0.0.1" serverAuth other-ca
echo "this is not a PEM file" >garbage.pem
rm -f ca.srl other-ca.srl
