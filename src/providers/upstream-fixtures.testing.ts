import { sandboxPortrait } from './sandbox.provider.js';

/**
 * Answers in the shapes the upstreams document (Dojah's OpenAPI examples, Prembly's response-code
 * table), with made-up people. Shared by the unit tests, the stub-server tests and the e2e tests.
 */
export const PORTRAIT = sandboxPortrait('upstream-fixture');
const portraitBase64 = PORTRAIT.toString('base64');
/** The same portrait the way Dojah's NIN example sends it: base64 wrapped at 76 characters. */
export const PORTRAIT_WRAPPED = portraitBase64.replace(/(.{76})/g, '$1\n');

export const dojah = {
  nin: {
    entity: {
      title: 'mr',
      birth_date: '10-06-1993',
      first_name: 'MOSHOOD',
      middle_name: 'KOLAWOLE',
      surname: 'SALIU',
      gender: 'm',
      telephone: '08137877844',
      origin_lga: 'Idanre',
      origin_state: 'Ondo',
      residence_address: 'NO 212 BROAD STREET ISALU QUARTERS II ODODE IDANRE',
      residence_state: 'Ondo',
      email: null,
      height: '****',
      nok_address_2: [],
      picture: PORTRAIT_WRAPPED,
      reference: '91b18d3a-9351-4f23-ad50-67b0e5f3665d',
    },
  },
  bvn: {
    entity: {
      title: 'Mr',
      bvn: '22468537919',
      date_of_birth: '28-Jun-2000',
      email: 'JOSHUA.OLADIPO@EXAMPLE.NG',
      enrollment_bank: '058',
      enrollment_branch: 'UNILORIN',
      first_name: 'JOSHUA',
      gender: 'Male',
      image: `data:image/png;base64,${portraitBase64}`,
      last_name: 'OLADIPO',
      level_of_account: 'Level 2 - Medium Level Accounts',
      lga_of_origin: 'Odo Otin',
      marital_status: 'Single',
      middle_name: 'OLUWATIMILEYIN',
      nationality: 'Nigeria',
      nin: '',
      phone_number1: '07085460116',
      phone_number2: '',
      registration_date: '21-Mar-18',
      residential_address: '24, AKATA OWODE, ILORIN',
      state_of_origin: 'Osun State',
      state_of_residence: 'Kwara State',
      watch_listed: 'NO',
    },
  },
  vin: {
    entity: {
      full_name: 'SALIU MOSHOOD KOLAWOLE',
      'voter_identification_number:': '90F5B1C5BD295355586',
      'gender:': 'Male',
      'occupation:': 'STUDENT',
      'state:': 'ONDO',
      'local_government:': 'IDANRE',
      'registration_area_ward:': 'ISALU JIGBOKIN',
      'polling_unit:': 'OJAJIGBOKIN, O/S IN FRONT OF ABANA I & II',
      polling_unit_code: '28/08/08/005',
    },
  },
  account: { entity: { account_number: '3046507407', account_name: 'SALIU MOSHOOD KOLAWOLE' } },
  selfie: { entity: { first_name: 'ADEYEMO', selfie_verification: { confidence_value: 99.99803924560547, match: true } } },
  notFound: { error: 'Wrong NIN Inputted' },
};

export const prembly = {
  nin: {
    status: true,
    detail: 'Verification Successful',
    response_code: '00',
    nin_data: {
      firstname: 'Ngozi',
      middlename: 'Adaeze',
      surname: 'Okafor',
      birthdate: '1990-04-07',
      gender: 'f',
      telephoneno: '2348031234567',
      self_origin_state: 'Anambra',
      self_origin_lga: 'Awka South',
      residence_AdressLine1: '12 Zik Avenue, Awka',
      residence_state: 'Anambra',
      photo: portraitBase64,
      signature: 'Not Available',
    },
    verification: { status: 'VERIFIED', reference: 'ref-1' },
  },
  bvn: {
    status: true,
    response_code: '00',
    data: {
      bvn: '22222222222',
      firstName: 'ISAAC',
      middleName: 'THOMPSON',
      lastName: 'BROWN',
      dateOfBirth: '1989-02-14',
      gender: 'Male',
      phoneNumber1: '07012345678',
      watchListed: 'NO',
      base64Image: 'Not Available',
    },
  },
  account: {
    status: true,
    response_code: '00',
    account_data: { account_number: '0123456789', account_name: 'OKAFOR NGOZI ADAEZE', Bank_name: 'Guaranty Trust Bank', bank_code: '058' },
  },
  face: {
    status: true,
    response_code: '00',
    nin_data: { firstname: 'Ngozi' },
    face_data: { status: true, response_code: '00', message: 'Face Match', confidence: 96.4, match: true },
  },
  notFound: { status: true, response_code: '01', detail: 'Record not found', data: {} },
  unavailable: { status: true, response_code: '02', detail: "Verification can't be completed by this time, kindly retry later" },
  walletEmpty: { status: false, response_code: '03', detail: 'Insufficient wallet balance' },
};
