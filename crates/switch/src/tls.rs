//! TLS for the controller channels (`ssl:` and `pssl:`), with mutual authentication as
//! Open vSwitch does it: each side presents a certificate and accepts the other's only
//! if it chains to the configured CA certificate. As in Open vSwitch, names are not
//! checked (controller certificates rarely carry the address they are reached at): the
//! CA is what vouches for a peer. TLS 1.2 and 1.3, rustls with the ring provider.
//!
//! [`TlsFiles`] names the PEM files (`--private-key`, `--certificate`, `--ca-cert`, as
//! ovs-vswitchd names them); [`Tls::load`] reads them once into a server and a client
//! configuration. Every error names the file and what is wrong with it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

/// The PEM files of the switch's TLS identity and the CA it trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub private_key: PathBuf,
    pub certificate: PathBuf,
    pub ca_cert: PathBuf,
}

/// Loaded TLS configurations for both directions.
#[derive(Clone)]
pub struct Tls {
    pub server: Arc<ServerConfig>,
    pub client: Arc<ClientConfig>,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", path.display()))
}

fn certs(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(path, format!("cannot read certificates ({e})")))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(path, format!("not PEM certificates ({e})")))?;
    if certs.is_empty() {
        return Err(bad(path, "holds no PEM certificate"));
    }
    Ok(certs)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Tls {
    /// Reads the key, the certificate chain and the CA certificates.
    pub fn load(files: &TlsFiles) -> io::Result<Tls> {
        let key = PrivateKeyDer::from_pem_file(&files.private_key)
            .map_err(|e| bad(&files.private_key, format!("no usable PEM private key ({e})")))?;
        let chain = certs(&files.certificate)?;
        let mut roots = RootCertStore::empty();
        for c in certs(&files.ca_cert)? {
            roots
                .add(c)
                .map_err(|e| bad(&files.ca_cert, format!("not a usable CA certificate ({e})")))?;
        }
        let roots = Arc::new(roots);
        let p = provider();
        let client_verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), p.clone())
            .build()
            .map_err(|e| bad(&files.ca_cert, e))?;
        let server = ServerConfig::builder_with_provider(p.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(&files.certificate, e))?
            .with_client_cert_verifier(client_verifier)
            .with_single_cert(chain.clone(), key.clone_key())
            .map_err(|e| bad(&files.private_key, e))?;
        let server_verifier = WebPkiServerVerifier::builder_with_provider(roots, p.clone())
            .build()
            .map_err(|e| bad(&files.ca_cert, e))?;
        let client = ClientConfig::builder_with_provider(p)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(&files.certificate, e))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(CaOnly(server_verifier)))
            .with_client_auth_cert(chain, key)
            .map_err(|e| bad(&files.private_key, e))?;
        Ok(Tls { server: Arc::new(server), client: Arc::new(client) })
    }
}

/// Verifies a server's certificate chain against the CA, accepting any name.
#[derive(Debug)]
struct CaOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A CA and two identities it signed, written as PEM files under `dir`; also an
    /// identity signed by another CA. Returns (switch, controller, stranger) files.
    pub(crate) fn make_pki(dir: &Path) -> (TlsFiles, TlsFiles, TlsFiles) {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        std::fs::create_dir_all(dir).unwrap();
        let mk_ca = |name: &str| {
            let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            p.distinguished_name.push(rcgen::DnType::CommonName, name);
            let k = KeyPair::generate().unwrap();
            let c = p.self_signed(&k).unwrap();
            (c, k)
        };
        let (ca, ca_key) = mk_ca("test ca");
        let (other, other_key) = mk_ca("other ca");
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let ca_path = write("ca.pem", ca.pem());
        let ident = |name: &str, signer: &rcgen::Certificate, signer_key: &KeyPair| {
            // No address in the certificate: names are not checked.
            let mut p = CertificateParams::new(vec![format!("{name}.invalid")]).unwrap();
            p.distinguished_name.push(rcgen::DnType::CommonName, name);
            let k = KeyPair::generate().unwrap();
            let c = p.signed_by(&k, signer, signer_key).unwrap();
            TlsFiles {
                private_key: write(&format!("{name}-key.pem"), k.serialize_pem()),
                certificate: write(&format!("{name}-cert.pem"), c.pem()),
                ca_cert: ca_path.clone(),
            }
        };
        let sw = ident("switch", &ca, &ca_key);
        let ctl = ident("controller", &ca, &ca_key);
        let stranger = ident("stranger", &other, &other_key);
        (sw, ctl, stranger)
    }

    #[test]
    fn loads_a_pki_and_names_the_file_that_is_wrong() {
        let dir = std::env::temp_dir().join(format!("pg-tls-{}", std::process::id()));
        let (sw, _, _) = make_pki(&dir);
        assert!(Tls::load(&sw).is_ok());
        let bad_key = TlsFiles { private_key: sw.certificate.clone(), ..sw.clone() };
        let e = Tls::load(&bad_key).err().unwrap().to_string();
        assert!(e.contains("switch-cert.pem") && e.contains("private key"), "{e}");
        let missing = TlsFiles { ca_cert: dir.join("nope.pem"), ..sw };
        let e = Tls::load(&missing).err().unwrap().to_string();
        assert!(e.contains("nope.pem"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod channel_tests {
    //! The TLS channels end to end on loopback: a `pssl:` listener and an `ssl:`
    //! connection of a real shell and agent, with rustls peers on the other side.

    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    use datapath::pipeline::{Datapath, DatapathConfig, Outputs};
    use openflow::framing::Framer;
    use openflow::{v13, Frame, Message, OFP13_VERSION};

    use super::tests::make_pki;
    use super::*;
    use crate::agent::{Agent, AgentConfig, Transmit};
    use crate::ports::PortTable;
    use crate::shell::{Shell, Target};

    struct Nowhere;
    impl Transmit for Nowhere {
        fn transmit(&mut self, _: &mut Outputs) -> Result<(), crate::agent::TransmitError> {
            Ok(())
        }
    }

    fn shell(targets: Vec<Target>, tls: Tls) -> Shell {
        let (dp, w, rx) = Datapath::new(DatapathConfig::default(), 16);
        let agent = Agent::new(
            AgentConfig::default(),
            dp,
            w,
            PortTable::new(Vec::new(), 0),
            Box::new(Nowhere),
        );
        Shell::start(agent, targets, Some(tls), None, rx, Instant::now()).unwrap()
    }

    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    /// Says hello and asks for the features over `s`; the datapath id in the reply.
    fn features<S: Read + Write>(s: &mut S) -> std::io::Result<u64> {
        let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[OFP13_VERSION])));
        s.write_all(&hello.encode().unwrap())?;
        s.write_all(&Frame::v13(2, v13::Message::FeaturesRequest).encode().unwrap())?;
        let mut f = Framer::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            f.push(&buf[..n]);
            while let Some(m) = f.next_message().unwrap() {
                if let Message::V13(v13::Message::FeaturesReply(r)) =
                    Frame::decode(m).unwrap().message
                {
                    return Ok(r.datapath_id);
                }
            }
        }
    }

    fn tls_client(files: &TlsFiles, port: u16) -> std::io::Result<u64> {
        let cfg = Tls::load(files)?.client;
        let conn = rustls::ClientConnection::new(
            cfg,
            ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
        )
        .map_err(std::io::Error::other)?;
        let sock = TcpStream::connect(("127.0.0.1", port))?;
        sock.set_read_timeout(Some(Duration::from_secs(5)))?;
        features(&mut rustls::StreamOwned::new(conn, sock))
    }

    #[test]
    fn pssl_serves_only_controllers_with_a_certificate_from_the_ca() {
        let dir = std::env::temp_dir().join(format!("pg-pssl-{}", std::process::id()));
        let (sw, ctl, stranger) = make_pki(&dir);
        let port = free_port();
        let t = Target::parse(&format!("pssl:{port}:127.0.0.1")).unwrap();
        let sh = shell(vec![t], Tls::load(&sw).unwrap());
        assert_eq!(tls_client(&ctl, port).unwrap(), 0);
        assert!(tls_client(&stranger, port).is_err(), "a foreign certificate is refused");
        // A plain TCP client gets no OpenFlow.
        let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
        plain.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert!(features(&mut plain).is_err());
        sh.stop();
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn ssl_reaches_a_controller_with_mutual_authentication() {
        let dir = std::env::temp_dir().join(format!("pg-ssl-{}", std::process::id()));
        let (sw, ctl, _) = make_pki(&dir);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sh = shell(
            vec![Target::parse(&format!("ssl:127.0.0.1:{port}")).unwrap()],
            Tls::load(&sw).unwrap(),
        );
        let (sock, _) = listener.accept().unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let server = Tls::load(&ctl).unwrap().server;
        let conn = rustls::ServerConnection::new(server).unwrap();
        let mut s = rustls::StreamOwned::new(conn, sock);
        assert_eq!(features(&mut s).unwrap(), 0);
        assert!(
            s.conn.peer_certificates().is_some_and(|c| !c.is_empty()),
            "the switch presented its certificate"
        );
        sh.stop();
        let _ = std::fs::remove_dir_all(dir);
    }
}
