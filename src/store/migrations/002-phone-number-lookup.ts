/**
 * Inbound SIP calls find the phone number a trunk dials in any org: an index on the number
 * alone serves that lookup (the unique (org_id, number) index cannot, being led by org_id).
 */
export const sql = `
create index phone_numbers_number on phone_numbers (number);
`;
