export type WebEnv = { Variables: { csrf: string } };
