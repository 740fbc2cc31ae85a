/** An account: the tenant every item, token and read-model row belongs to. */
export interface Account {
  id: string;
  name: string;
  /** Public: it names the account in every path of the API. */
  licenseCode: string;
}
