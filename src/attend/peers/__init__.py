"""Sessions and peers: session identity, message trays and presence (DESIGN.md, "Peers")."""
