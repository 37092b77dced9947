//! OpenFlow 1.3 table features (`OFPMP_TABLE_FEATURES` bodies and their properties).
